import os
import sys
import random
import socket
import subprocess

import numpy as np
import torch


def set_seed(seed=1, deterministic=False):
    """Set the random seed of the environment for reproducibility."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    os.environ['PYTHONHASHSEED'] = str(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def find_free_port():
    """Find a free port to use as DDP master port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(('', 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def get_gpu_memory_usage():
    """Return a list with the used memory (MiB) of every visible GPU."""
    out = subprocess.check_output(
        ['nvidia-smi', '--query-gpu=memory.used', '--format=csv,nounits,noheader'],
        encoding='utf-8')
    usage = [int(x) for x in out.strip().split('\n')]
    visible = os.environ.get('CUDA_VISIBLE_DEVICES')
    if visible:
        ids = [int(i) for i in visible.split(',')]
        usage = [usage[i] for i in ids]
    return usage


def wait_for_free_gpus(num_gpus, max_used_mb=1000):
    """Block until `num_gpus` GPUs have less than `max_used_mb` memory in use."""
    import time
    while True:
        usage = get_gpu_memory_usage()
        free = [i for i, u in enumerate(usage) if u < max_used_mb]
        if len(free) >= num_gpus:
            return free[:num_gpus]
        print(f'Waiting for {num_gpus} free GPUs, current usage {usage}')
        time.sleep(60)


def datetime2str(form='%Y-%m-%d_%H-%M-%S'):
    import datetime
    return datetime.datetime.now().strftime(form)


def print_args(args):
    for k in sorted(vars(args)):
        print(f'{k}: {getattr(args, k)}')
    sys.stdout.flush()


def to_numpy(x):
    if torch.is_tensor(x):
        return x.detach().cpu().numpy()
    return np.asarray(x)


class AverageMeter:
    """Computes and stores the average and current value."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0.
        self.avg = 0.
        self.sum = 0.
        self.count = 0

    def update(self, val, n=1):
        if torch.is_tensor(val):
            val = val.item()
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def compute(self):
        return self.avg


class MeanMetric:
    """Running mean that can be synced across DDP ranks."""

    def __init__(self, device=torch.device('cpu')):
        self.device = device
        self.reset()

    def reset(self):
        self.sum = torch.zeros((), dtype=torch.float64, device=self.device)
        self.count = torch.zeros((), dtype=torch.float64, device=self.device)

    def update(self, val, n=1):
        if not torch.is_tensor(val):
            val = torch.tensor(val, device=self.device)
        self.sum += val.detach().double() * n
        self.count += n

    def compute(self):
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            x = torch.stack([self.sum, self.count])
            torch.distributed.all_reduce(x)
            return (x[0] / x[1]).item()
        return (self.sum / self.count).item()
