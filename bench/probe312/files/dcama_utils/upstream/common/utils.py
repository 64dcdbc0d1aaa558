r""" Helper functions """
import os
import random

import torch
import torch.distributed as dist
import numpy as np


def fix_randseed(seed):
    r""" Set random seeds for reproducibility """
    if seed is None:
        seed = int(random.random() * 1e5)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True


def mean(x):
    return sum(x) / len(x) if len(x) > 0 else 0.0


def to_cuda(batch):
    for key, value in batch.items():
        if isinstance(value, torch.Tensor):
            batch[key] = value.cuda(non_blocking=True)
    return batch


def to_cpu(tensor):
    return tensor.detach().clone().cpu()


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


def save_on_master(*args, **kwargs):
    if is_main_process():
        torch.save(*args, **kwargs)


def reduce_metric(metric, average=True):
    r""" sum (or average) a python float / tensor over all ranks; the result lives on the current GPU """
    world_size = get_world_size()
    if not torch.is_tensor(metric):
        metric = torch.tensor(metric, dtype=torch.float32, device='cuda')
    if world_size < 2:
        return metric
    metric = metric.clone()
    dist.all_reduce(metric, op=dist.ReduceOp.SUM)
    if average:
        metric /= world_size
    return metric


def init_distributed_mode(args):
    r""" fill args.rank / args.world_size / args.local_rank from the launcher's environment """
    if 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:
        args.rank = int(os.environ['RANK'])
        args.world_size = int(os.environ['WORLD_SIZE'])
        args.local_rank = int(os.environ.get('LOCAL_RANK', args.local_rank))
    elif 'SLURM_PROCID' in os.environ:
        args.rank = int(os.environ['SLURM_PROCID'])
        args.local_rank = args.rank % torch.cuda.device_count()
    else:
        print('Not using distributed mode')
        args.distributed = False
        return
    args.distributed = True
    args.dist_backend = 'nccl'
    print('| distributed init (rank {}): local rank {}'.format(args.rank, args.local_rank), flush=True)
