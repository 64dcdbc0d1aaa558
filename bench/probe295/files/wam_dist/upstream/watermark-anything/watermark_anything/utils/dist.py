# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

"""
Distributed helpers: works for `torchrun` (env://), SLURM (srun, one task per GPU) and plain single-GPU runs.
"""

import os
import subprocess
import datetime

import torch
import torch.distributed as dist


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


def setup_for_distributed(is_master):
    """
    This function disables printing when not in master process
    """
    import builtins as __builtin__
    builtin_print = __builtin__.print

    def print(*args, **kwargs):
        force = kwargs.pop('force', False)
        force = force or (get_world_size() > 8)
        if is_master or force:
            now = datetime.datetime.now().time()
            builtin_print('[{}] '.format(now), end='')  # print with time stamp
            builtin_print(*args, **kwargs)

    __builtin__.print = print


def all_reduce_mean(x):
    world_size = get_world_size()
    if world_size > 1:
        x_reduce = torch.tensor(x).cuda()
        dist.all_reduce(x_reduce)
        x_reduce /= world_size
        return x_reduce.item()
    else:
        return x


def all_gather_tensor(t):
    """ Gathers a tensor of the same shape from all ranks (used for the eval metrics). """
    if get_world_size() == 1:
        return t
    out = [torch.zeros_like(t) for _ in range(get_world_size())]
    dist.all_gather(out, t.contiguous())
    return torch.cat(out, dim=0)


def init_distributed_mode(params):
    """
    Sets params.distributed, params.global_rank, params.local_rank, params.world_size, params.is_master.
    """
    is_slurm_job = 'SLURM_JOB_ID' in os.environ and not params.debug_slurm and 'WORLD_SIZE' not in os.environ
    if is_slurm_job:
        params.global_rank = int(os.environ['SLURM_PROCID'])
        params.world_size = int(os.environ['SLURM_NTASKS'])
        params.local_rank = params.global_rank % torch.cuda.device_count()
        hostnames = subprocess.check_output(['scontrol', 'show', 'hostnames', os.environ['SLURM_JOB_NODELIST']])
        params.master_addr = hostnames.split()[0].decode('utf-8')
        if params.master_port == -1:
            params.master_port = 19000 + int(os.environ['SLURM_JOB_ID']) % 1000
        os.environ['MASTER_ADDR'] = params.master_addr
        os.environ['MASTER_PORT'] = str(params.master_port)
        os.environ['WORLD_SIZE'] = str(params.world_size)
        os.environ['RANK'] = str(params.global_rank)
        os.environ['LOCAL_RANK'] = str(params.local_rank)
    elif 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:
        params.global_rank = int(os.environ['RANK'])
        params.world_size = int(os.environ['WORLD_SIZE'])
        params.local_rank = int(os.environ['LOCAL_RANK'])
    else:
        print('Not using distributed mode')
        params.distributed = False
        params.global_rank = 0
        params.local_rank = 0
        params.world_size = 1
        params.is_master = True
        return

    params.distributed = True
    params.is_master = params.global_rank == 0
    params.dist_backend = 'nccl'

    # surface NCCL errors as exceptions instead of hangs
    os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')

    torch.cuda.set_device(params.local_rank)
    print('| distributed init (rank {}): env://, local rank {}, world size {}'.format(
        params.global_rank, params.local_rank, params.world_size), flush=True)
    dist.init_process_group(backend=params.dist_backend, init_method='env://',
                            world_size=params.world_size, rank=params.global_rank,
                            timeout=datetime.timedelta(minutes=60))
    dist.barrier()
    setup_for_distributed(params.is_master)
