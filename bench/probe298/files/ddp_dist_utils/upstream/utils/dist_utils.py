"""Distributed helpers (torchrun / torch.distributed.launch / SLURM).

Mostly the DeiT / MAE ``init_distributed_mode`` with a couple of additions for our
cluster (SLURM srun with one task per GPU).
"""
import builtins
import datetime
import os
import subprocess

import torch
import torch.distributed as dist


def setup_for_distributed(is_master):
    """
    This function disables printing when not in master process
    """
    builtin_print = builtins.print

    def print(*args, **kwargs):
        force = kwargs.pop('force', False)
        force = force or (get_world_size() > 8)
        if is_master or force:
            now = datetime.datetime.now().time()
            builtin_print('[{}] '.format(now), end='')  # print with time stamp
            builtin_print(*args, **kwargs)

    builtins.print = print


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


def _init_slurm_env(args):
    """Translate SLURM variables into the torchrun ones so the rest of the code is uniform."""
    proc_id = int(os.environ['SLURM_PROCID'])
    ntasks = int(os.environ['SLURM_NTASKS'])
    node_list = os.environ['SLURM_NODELIST']
    num_gpus = torch.cuda.device_count()
    addr = subprocess.getoutput('scontrol show hostname {} | head -n1'.format(node_list))
    os.environ.setdefault('MASTER_PORT', '29500')
    os.environ['MASTER_ADDR'] = addr
    os.environ['WORLD_SIZE'] = str(ntasks)
    os.environ['LOCAL_RANK'] = str(proc_id % num_gpus)
    os.environ['RANK'] = str(proc_id)
    args.rank = proc_id
    args.gpu = proc_id % num_gpus
    args.world_size = ntasks


def init_distributed_mode(args):
    if 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:
        args.rank = int(os.environ["RANK"])
        args.world_size = int(os.environ['WORLD_SIZE'])
        args.gpu = int(os.environ['LOCAL_RANK'])
    elif 'SLURM_PROCID' in os.environ:
        _init_slurm_env(args)
    else:
        print('Not using distributed mode')
        setup_for_distributed(is_master=True)  # hack
        args.distributed = False
        args.rank = 0
        args.world_size = 1
        args.gpu = 0
        return

    args.distributed = args.world_size > 1
    if not args.distributed:
        args.rank = 0
        setup_for_distributed(is_master=True)
        return

    torch.cuda.set_device(args.gpu)
    args.dist_backend = getattr(args, 'dist_backend', 'nccl')
    print('| distributed init (rank {}): {}, gpu {}'.format(
        args.rank, args.dist_url, args.gpu), flush=True)
    torch.distributed.init_process_group(backend=args.dist_backend, init_method=args.dist_url,
                                         world_size=args.world_size, rank=args.rank,
                                         timeout=datetime.timedelta(minutes=60))
    torch.distributed.barrier()
    setup_for_distributed(args.rank == 0)


def reduce_tensor(tensor, n=None):
    """Average a tensor across all ranks (returns a new tensor)."""
    if n is None:
        n = get_world_size()
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= n
    return rt


def all_reduce_mean(x):
    world_size = get_world_size()
    if world_size > 1:
        x_reduce = torch.tensor(x).cuda()
        dist.all_reduce(x_reduce)
        x_reduce /= world_size
        return x_reduce.item()
    else:
        return x


def broadcast_object(obj, src=0):
    """Broadcast a picklable object from ``src`` to every rank."""
    if not is_dist_avail_and_initialized():
        return obj
    objects = [obj if get_rank() == src else None]
    dist.broadcast_object_list(objects, src=src)
    return objects[0]
