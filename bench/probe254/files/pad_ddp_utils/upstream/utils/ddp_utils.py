# Distributed helpers, adapted from torchvision's detection/segmentation references.
# Launch with:
#   python -m torch.distributed.launch --nproc_per_node=<num_gpus> --use_env main_landet.py --train ...
import os
import pickle
import builtins

import torch
import torch.distributed as dist


def setup_for_distributed(is_master):
    """
    This function disables printing when not in master process
    """
    builtin_print = builtins.print

    def print(*args, **kwargs):
        force = kwargs.pop('force', False)
        if is_master or force:
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


def save_on_master(*args, **kwargs):
    if is_main_process():
        torch.save(*args, **kwargs)


def init_distributed_mode(args):
    """Fill args['rank'], args['world_size'], args['gpu'] and args['distributed'] and create the process group.

    args is the 'train' (or 'test') dict of a config file; it must contain 'dist_url' (default 'env://').
    """
    if 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:
        args['rank'] = int(os.environ["RANK"])
        args['world_size'] = int(os.environ['WORLD_SIZE'])
        args['gpu'] = int(os.environ['LOCAL_RANK'])
    elif 'SLURM_PROCID' in os.environ:
        args['rank'] = int(os.environ['SLURM_PROCID'])
        args['gpu'] = args['rank'] % torch.cuda.device_count()
    else:
        print('Not using distributed mode')
        args['distributed'] = False
        return

    args['distributed'] = True

    torch.cuda.set_device(args['gpu'])
    args['dist_backend'] = 'nccl'
    print('| distributed init (rank {}): {}'.format(args['rank'], args['dist_url']), flush=True)
    torch.distributed.init_process_group(backend=args['dist_backend'],
                                         init_method=args['dist_url'],
                                         world_size=args['world_size'],
                                         rank=args['rank'])
    torch.distributed.barrier()
    setup_for_distributed(args['rank'] == 0)


def reduce_dict(input_dict, average=True):
    """
    Args:
        input_dict (dict): all the values will be reduced
        average (bool): whether to do average or sum
    Reduce the values in the dictionary from all processes so that all processes
    have the averaged results. Returns a dict with the same fields as
    input_dict, after reduction.
    """
    world_size = get_world_size()
    if world_size < 2:
        return input_dict
    with torch.no_grad():
        names = []
        values = []
        # sort the keys so that they are consistent across processes
        for k in sorted(input_dict.keys()):
            names.append(k)
            values.append(input_dict[k])
        values = torch.stack(values, dim=0)
        dist.all_reduce(values)
        if average:
            values /= world_size
        reduced_dict = {k: v for k, v in zip(names, values)}
    return reduced_dict


def all_gather(data):
    """
    Run all_gather on arbitrary picklable data (not necessarily tensors).
    Uses the default process group; objects are pickled into byte tensors on the current device.
    """
    world_size = get_world_size()
    if world_size == 1:
        return [data]
    data_list = [None] * world_size
    dist.all_gather_object(data_list, data)
    return data_list


def reduce_scalar(value, device, average=True):
    """All-reduce a python number through a 1-element tensor on `device`."""
    if not is_dist_avail_and_initialized():
        return value
    t = torch.tensor([value], dtype=torch.float32 if isinstance(value, float) else torch.int64, device=device)
    dist.all_reduce(t)
    if average:
        t = t / get_world_size()
    return t.item()


def concat_all_gather(tensor):
    """Gather tensors of identical shape from all ranks and concatenate along dim 0 (no gradient)."""
    if not is_dist_avail_and_initialized():
        return tensor
    tensors_gather = [torch.ones_like(tensor) for _ in range(get_world_size())]
    dist.all_gather(tensors_gather, tensor, async_op=False)
    return torch.cat(tensors_gather, dim=0)


class SmoothedValue(object):
    """Track a series of values and provide access to smoothed values over a
    window or the global series average.
    """

    def __init__(self, window_size=20):
        from collections import deque
        self.deque = deque(maxlen=window_size)
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.deque.append(value)
        self.count += n
        self.total += value * n

    def synchronize_between_processes(self):
        """
        Warning: does not synchronize the deque!
        """
        if not is_dist_avail_and_initialized():
            return
        t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')
        dist.barrier()
        dist.all_reduce(t)
        t = t.tolist()
        self.count = int(t[0])
        self.total = t[1]

    @property
    def global_avg(self):
        return self.total / max(self.count, 1)

    @property
    def avg(self):
        d = list(self.deque)
        return sum(d) / max(len(d), 1)


def dump_rank_info(path):
    """Debug helper: write which device every rank ended up on."""
    info = dict(rank=get_rank(), world_size=get_world_size(),
                local_rank=os.environ.get('LOCAL_RANK'),
                visible=os.environ.get('CUDA_VISIBLE_DEVICES'))
    with open(os.path.join(path, 'rank{}.pkl'.format(get_rank())), 'wb') as f:
        pickle.dump(info, f)
