import os
import subprocess

import torch


def visible_gpu(gpus):
    """
        set visible gpu.

        can be a single id, or a list

        return a list of new gpus ids
    """
    gpus = [gpus] if isinstance(gpus, int) else list(gpus)
    os.environ['CUDA_VISIBLE_DEVICES'] = ','.join(list(map(str, gpus)))
    return list(range(len(gpus)))


def ngpu(gpus):
    """
        count how many gpus used.
    """
    gpus = [gpus] if isinstance(gpus, int) else list(gpus)
    return len(gpus)


def occupy_gpu(gpus=None):
    """
        make program appear on nvidia-smi.
    """
    if gpus is None:
        torch.zeros(1).cuda()
    else:
        gpus = [gpus] if isinstance(gpus, int) else list(gpus)
        for g in gpus:
            torch.zeros(1).cuda(g)


def free_gpus(min_free_mb=4000):
    """
        return the ids of the gpus that have at least `min_free_mb` MB free,
        as reported by the driver (used by the multi-run sweep scripts).
    """
    try:
        out = subprocess.check_output(
            ['nvidia-smi', '--query-gpu=index,memory.free',
             '--format=csv,noheader,nounits'])
    except (OSError, subprocess.CalledProcessError):
        return []
    ids = []
    for line in out.decode().strip().split('\n'):
        if not line.strip():
            continue
        idx, free = [int(x) for x in line.split(',')]
        if free >= min_free_mb:
            ids.append(idx)
    return ids


def memory_report(device=None):
    """
        one-line summary of the caching allocator, printed by the processors
        at the end of every epoch.
    """
    allocated = torch.cuda.memory_allocated(device) / 1024 ** 2
    reserved = torch.cuda.memory_reserved(device) / 1024 ** 2
    peak = torch.cuda.max_memory_allocated(device) / 1024 ** 2
    return 'mem: {:.0f}MB alloc / {:.0f}MB reserved / {:.0f}MB peak'.format(
        allocated, reserved, peak)
