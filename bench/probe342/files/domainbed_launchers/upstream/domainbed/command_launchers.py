# Copyright (c) Facebook, Inc. and its affiliates. All Rights Reserved

"""
A command launcher launches a list of commands on a cluster; implement your own
launcher to add support for your cluster. We've provided an example launcher
which runs all commands serially on the local machine, and a launcher that
spreads jobs over the local GPUs (one job per GPU at a time).
"""

import os
import shlex
import subprocess
import time
import torch


def local_launcher(commands):
    """Launch commands serially on the local machine."""
    for cmd in commands:
        subprocess.call(cmd, shell=True)


def dummy_launcher(commands):
    """
    Doesn't run anything; instead, prints each command.
    Useful for testing.
    """
    for cmd in commands:
        print(f'Dummy launcher: {cmd}')


def _visible_gpus():
    """GPU ids this sweep may use.

    Respects CUDA_VISIBLE_DEVICES when the user already restricted the set
    (a trailing comma such as ``0,1,2,`` is tolerated); otherwise every GPU
    torch can see is used.
    """
    env = os.environ.get('CUDA_VISIBLE_DEVICES')
    if env is not None:
        return [x for x in env.split(',') if x.strip() != '']
    return [str(i) for i in range(torch.cuda.device_count())]


def _free_memory_mb():
    """Free memory per GPU according to nvidia-smi (used to skip busy cards)."""
    out = subprocess.check_output(
        ['nvidia-smi', '--query-gpu=memory.free', '--format=csv,nounits,noheader'])
    return [int(x) for x in out.decode().strip().split('\n')]


def multi_gpu_launcher(commands):
    """
    Launch commands on the local machine, using all GPUs in parallel.
    """
    print('WARNING: using experimental multi_gpu_launcher.')
    available_gpus = _visible_gpus()
    n_gpus = len(available_gpus)
    procs_by_gpu = [None] * n_gpus

    while len(commands) > 0:
        for idx, gpu_idx in enumerate(available_gpus):
            proc = procs_by_gpu[idx]
            if (proc is None) or (proc.poll() is not None):
                # Nothing is running on this GPU; launch a command.
                cmd = commands.pop(0)
                new_proc = subprocess.Popen(
                    f'CUDA_VISIBLE_DEVICES={gpu_idx} {cmd}', shell=True)
                procs_by_gpu[idx] = new_proc
                break
        time.sleep(1)

    # Wait for the last few tasks to finish before returning
    for p in procs_by_gpu:
        if p is not None:
            p.wait()


def greedy_gpu_launcher(commands, min_free_mb=10000):
    """
    Like multi_gpu_launcher but only hands a job to a GPU that currently has at
    least `min_free_mb` MiB free, so it can share a box with other users.
    """
    available_gpus = _visible_gpus()
    procs = {g: None for g in available_gpus}
    while len(commands) > 0:
        free = _free_memory_mb()
        launched = False
        for gpu_idx in available_gpus:
            proc = procs[gpu_idx]
            busy = proc is not None and proc.poll() is None
            if busy or free[int(gpu_idx)] < min_free_mb:
                continue
            cmd = commands.pop(0)
            env = dict(os.environ, CUDA_VISIBLE_DEVICES=gpu_idx)
            procs[gpu_idx] = subprocess.Popen(shlex.split(cmd), env=env)
            launched = True
            break
        if not launched:
            time.sleep(5)
    for p in procs.values():
        if p is not None:
            p.wait()


def slurm_launcher(commands, partition='learnfair', gpus_per_job=1):
    """Submit each command as its own sbatch job (one GPU each)."""
    for cmd in commands:
        wrapped = (f"sbatch --partition={partition} --gres=gpu:{gpus_per_job} "
                   f"--cpus-per-task=10 --time=72:00:00 --wrap={shlex.quote(cmd)}")
        subprocess.call(wrapped, shell=True)


REGISTRY = {
    'local': local_launcher,
    'dummy': dummy_launcher,
    'multi_gpu': multi_gpu_launcher,
    'greedy_gpu': greedy_gpu_launcher,
    'slurm': slurm_launcher,
}

try:
    from domainbed import facebook
    facebook.register_command_launchers(REGISTRY)
except ImportError:
    pass
