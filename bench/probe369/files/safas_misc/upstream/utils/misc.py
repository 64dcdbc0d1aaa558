import os
import random
import shutil

import numpy as np
import torch
import torch.distributed as dist


def init_distributed(args, backend='nccl'):
    """Initialise torch.distributed from the env:// variables set by torchrun.

    Returns True when running with more than one process.
    """
    if torch.cuda.is_available():
        torch.cuda.set_device(args.local_rank)
    if 'WORLD_SIZE' in os.environ and int(os.environ['WORLD_SIZE']) > 1:
        args.rank = int(os.environ['RANK'])
        args.world_size = int(os.environ['WORLD_SIZE'])
        print('| distributed init (rank {}): env://, backend {}'.format(args.rank, backend), flush=True)
        dist.init_process_group(backend=backend, init_method='env://',
                                world_size=args.world_size, rank=args.rank)
        dist.barrier()
        setup_for_distributed(args.rank == 0)
        return True
    args.rank, args.world_size = 0, 1
    return False


def setup_for_distributed(is_master):
    """This function disables printing when not in master process."""
    import builtins as __builtin__
    builtin_print = __builtin__.print

    def print(*args, **kwargs):
        force = kwargs.pop('force', False)
        if is_master or force:
            builtin_print(*args, **kwargs)

    __builtin__.print = print


def is_dist_avail_and_initialized():
    if not dist.is_available():
        return False
    if not dist.is_initialized():
        return False
    return True


def get_world_size():
    if not is_dist_avail_and_initialized():
        return 1
    return dist.get_world_size()


def get_rank():
    if not is_dist_avail_and_initialized():
        return 0
    return dist.get_rank()


def is_main_process():
    return get_rank() == 0


def reduce_tensor(tensor):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= get_world_size()
    return rt


def gather_tensor(tensor):
    """all_gather tensors of different length along dim 0 (pads to the max size first)."""
    world_size = get_world_size()
    local_size = torch.tensor([tensor.shape[0]], device=tensor.device)
    sizes = [torch.zeros_like(local_size) for _ in range(world_size)]
    dist.all_gather(sizes, local_size)
    sizes = [int(s.item()) for s in sizes]
    max_size = max(sizes)
    if tensor.shape[0] < max_size:
        pad = torch.zeros((max_size - tensor.shape[0],) + tuple(tensor.shape[1:]),
                          dtype=tensor.dtype, device=tensor.device)
        tensor = torch.cat([tensor, pad], dim=0)
    gathered = [torch.zeros_like(tensor) for _ in range(world_size)]
    dist.all_gather(gathered, tensor)
    return torch.cat([g[:s] for g, s in zip(gathered, sizes)], dim=0)


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.benchmark = True


def gpu_mem_mb():
    return torch.cuda.max_memory_allocated() / 1024.0 / 1024.0


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def save_checkpoint(state, is_best, output_dir, filename='checkpoint.pth'):
    path = os.path.join(output_dir, filename)
    torch.save(state, path)
    if is_best:
        shutil.copyfile(path, os.path.join(output_dir, 'model_best.pth'))
