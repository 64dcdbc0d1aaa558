import os
import random
import torch
import numpy as np

ALREADY_INITALIZED = False

# TODO: Consider torch.distributed.is_initialized() instead


def init(rank):
    nranks = 'WORLD_SIZE' in os.environ and int(os.environ['WORLD_SIZE'])
    nranks = max(1, nranks)
    is_distributed = (nranks > 1) or ('WORLD_SIZE' in os.environ)

    global ALREADY_INITALIZED
    if ALREADY_INITALIZED:
        return nranks, is_distributed

    ALREADY_INITALIZED = True

    if is_distributed and torch.cuda.is_available():
        num_gpus = torch.cuda.device_count()
        print(f'nranks = {nranks} \t num_gpus = {num_gpus} \t device={rank % num_gpus}')

        torch.cuda.set_device(rank % num_gpus)
        torch.distributed.init_process_group(backend='nccl', init_method='env://')

    return nranks, is_distributed


def barrier(rank):
    nranks = 'WORLD_SIZE' in os.environ and int(os.environ['WORLD_SIZE'])
    nranks = max(1, nranks)

    if rank >= 0 and nranks > 1:
        torch.distributed.barrier(device_ids=[rank % torch.cuda.device_count()])


def is_main_process(rank):
    return rank < 1


def all_gather_object_list(obj, nranks):
    """Gather an arbitrary picklable object from every rank (used for doclens / metadata)."""
    if nranks <= 1 or not torch.distributed.is_initialized():
        return [obj]

    gathered = [None for _ in range(nranks)]
    torch.distributed.all_gather_object(gathered, obj)
    return gathered


def all_reduce_sum(tensor, nranks):
    """Sums `tensor` in-place across ranks. NCCL only reduces device tensors, so callers must
    move CPU tensors to the GPU first (see CollectionIndexer._sample_embeddings)."""
    if nranks > 1 and torch.distributed.is_initialized():
        torch.distributed.all_reduce(tensor, op=torch.distributed.ReduceOp.SUM)
    return tensor


def seed_everything(seed=12345):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
