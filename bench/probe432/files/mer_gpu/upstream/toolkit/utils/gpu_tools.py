# *_*coding:utf-8 *_*
"""Pick the least loaded GPU(s) before launching a run on a shared server."""
import os
import subprocess
import time

import torch


def query_free_memory():
    """Return a list with the free memory (MiB) of every visible GPU."""
    output = subprocess.check_output(
        ['nvidia-smi', '--query-gpu=memory.free', '--format=csv,nounits,noheader'],
        encoding='utf-8',
    )
    return [int(x) for x in output.strip().split('\n') if x.strip()]


def auto_select_gpu(min_free_mb=8000, wait=True, interval=60):
    """Return the index of the GPU with the most free memory (blocking until one has `min_free_mb`)."""
    while True:
        free = query_free_memory()
        best = max(range(len(free)), key=lambda i: free[i])
        if free[best] >= min_free_mb or not wait:
            print(f'[gpu_tools] select gpu {best} with {free[best]} MiB free')
            return best
        print(f'[gpu_tools] no gpu has {min_free_mb} MiB free ({free}), retry in {interval}s')
        time.sleep(interval)


def set_visible_gpu(gpu):
    """Restrict this process to one card; must run before the first CUDA call."""
    if gpu == 'auto':
        gpu = auto_select_gpu()
    os.environ['CUDA_VISIBLE_DEVICES'] = str(gpu)
    return gpu


def report_memory(tag=''):
    if not torch.cuda.is_available():
        return
    alloc = torch.cuda.memory_allocated() / 1024 ** 2
    peak = torch.cuda.max_memory_allocated() / 1024 ** 2
    print(f'[gpu_tools]{tag} allocated {alloc:.0f} MiB, peak {peak:.0f} MiB')
