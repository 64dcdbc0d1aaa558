"""Small helpers to pick an idle GPU on a shared lab server.

Most of our noisy-label sweeps are launched as many single-GPU jobs; these helpers
look at the driver's view of free memory and pin the process to the emptiest card.
"""
import os
import subprocess
import time

import numpy as np
import torch


def get_free_gpu_ids(min_free_mb=4000, max_gpus=1):
    """Return up to `max_gpus` GPU indices sorted by free memory (largest first)."""
    try:
        out = subprocess.check_output(['nvidia-smi', '--query-gpu=memory.free', '--format=csv,nounits,noheader'])
    except (OSError, subprocess.CalledProcessError):
        return []
    free = [int(x) for x in out.decode().strip().split('\n') if x.strip()]
    order = np.argsort(free)[::-1]
    return [int(i) for i in order if free[i] >= min_free_mb][:max_gpus]


def get_free_gpu_legacy():
    # kept for the old co-teaching scripts that call it directly
    os.system('nvidia-smi -q -d Memory |grep -A4 GPU|grep Free >tmp')
    memory_available = [int(x.split()[2]) for x in open('tmp', 'r').readlines()]
    os.remove('tmp')
    return int(np.argmax(memory_available))


def wait_for_gpu(min_free_mb=4000, poll_seconds=60, timeout=None):
    """Block until some GPU has at least `min_free_mb` MiB free; return its index."""
    start = time.time()
    while True:
        ids = get_free_gpu_ids(min_free_mb=min_free_mb)
        if ids:
            return ids[0]
        if timeout is not None and time.time() - start > timeout:
            raise TimeoutError('no GPU with %d MiB free after %ds' % (min_free_mb, timeout))
        time.sleep(poll_seconds)


def select_device(gpu=None, min_free_mb=4000):
    """Pin this process to one GPU and return the matching torch.device.

    gpu: an int index, 'auto' / None to pick the emptiest card, or 'cpu'.
    """
    if gpu == 'cpu':
        return torch.device('cpu')
    if gpu is None or gpu == 'auto':
        ids = get_free_gpu_ids(min_free_mb=min_free_mb)
        if not ids:
            print('[gpu_select] no free GPU found, falling back to CPU')
            return torch.device('cpu')
        gpu = ids[0]
    os.environ['CUDA_VISIBLE_DEVICES'] = str(gpu)
    if not torch.cuda.is_available():
        return torch.device('cpu')
    print('[gpu_select] using physical GPU %s' % gpu)
    return torch.device('cuda:0')


def gpu_utilization(index=0):
    """Percent utilisation of one card as reported by NVML (None if NVML is missing)."""
    try:
        import pynvml
    except ImportError:
        return None
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    return pynvml.nvmlDeviceGetUtilizationRates(handle).gpu


def report_memory(tag='', verbose=True):
    if not torch.cuda.is_available() or not verbose:
        return
    alloc = torch.cuda.memory_allocated() / 1024 ** 2
    peak = torch.cuda.max_memory_allocated() / 1024 ** 2
    print('[mem%s] allocated %.0f MiB, peak %.0f MiB' % ((' ' + tag) if tag else '', alloc, peak))


class Timer(object):
    """Wall-clock timer; the GPU work is asynchronous, so callers synchronize first."""

    def __init__(self):
        self.t0 = time.time()

    def lap(self):
        t = time.time()
        dt, self.t0 = t - self.t0, t
        return dt
