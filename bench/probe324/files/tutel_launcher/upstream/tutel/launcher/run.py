# Copyright (c) Microsoft Corporation.
# Licensed under the MIT license.

"""
Thin launcher around torch.distributed.run:

  python3 -m tutel.launcher.run [--nproc_per_node=N] -m tutel.examples.helloworld --batch_size=16

It reads the usual MPI / torchrun environment variables so that the same
command line works under `mpiexec`, slurm and plain ssh loops.
"""

import os
import re
import sys
import shutil
import subprocess


def _detect_local_size():
    local_size = int(os.environ.get('LOCAL_SIZE', 0))
    if local_size > 0:
        return local_size
    visible = os.environ.get('CUDA_VISIBLE_DEVICES', '').strip()
    if visible:
        return len([x for x in visible.split(',') if x.strip()])
    try:
        import torch
        local_size = torch.cuda.device_count()
    except Exception:
        local_size = 0
    return max(local_size, 1)


def _gpu_summary():
    if shutil.which('nvidia-smi') is None:
        return None
    try:
        out = subprocess.check_output(
            ['nvidia-smi', '--query-gpu=name,memory.total', '--format=csv,noheader'],
            stderr=subprocess.DEVNULL)
        return out.decode().strip().splitlines()
    except Exception:
        return None


def _set_comm_env_defaults():
    # Sensible NCCL defaults for Azure NDv4 / NDm A100 v4 clusters.
    os.environ.setdefault('NCCL_DEBUG', 'WARN')
    os.environ.setdefault('NCCL_IB_PCI_RELAXED_ORDERING', '1')
    os.environ.setdefault('NCCL_SOCKET_IFNAME', 'eth0')
    os.environ.setdefault('NCCL_TOPO_FILE', '/opt/microsoft/ndv4-topo.xml')
    os.environ.setdefault('OMP_NUM_THREADS', '4')


def main():
    host_size = int(os.environ.get('OMPI_COMM_WORLD_SIZE', os.environ.get('WORLD_SIZE', 1)))
    host_rank = int(os.environ.get('OMPI_COMM_WORLD_RANK', os.environ.get('RANK', 0)))
    master_addr = os.environ.get('MASTER_ADDR', 'localhost')
    master_port = os.environ.get('MASTER_PORT', '23232')

    argv = sys.argv[1:]
    local_size = None
    if argv and argv[0].startswith('--nproc_per_node='):
        local_size = int(argv[0].split('=', 1)[1])
        argv = argv[1:]
    if local_size is None:
        local_size = _detect_local_size()

    _set_comm_env_defaults()
    os.environ['LOCAL_SIZE'] = str(local_size)

    if host_rank == 0:
        gpus = _gpu_summary()
        if gpus:
            print('[tutel.launcher] %d GPU(s) per node: %s' % (local_size, gpus[0]))

    cmd_args = [sys.executable, '-m', 'torch.distributed.run',
                '--nproc_per_node=%s' % local_size,
                '--nnodes=%s' % host_size,
                '--node_rank=%s' % host_rank,
                '--master_addr=%s' % master_addr,
                '--master_port=%s' % master_port] + argv
    os.execl(cmd_args[0], *cmd_args)


def execl_main():
    """Per-rank entry used by `mpiexec -n N python3 -m tutel.launcher.execl ...`:
    pin each local rank to one GPU before the user script imports torch."""
    local_rank = int(os.environ.get('OMPI_COMM_WORLD_LOCAL_RANK', os.environ.get('LOCAL_RANK', 0)))
    local_size = int(os.environ.get('OMPI_COMM_WORLD_LOCAL_SIZE', os.environ.get('LOCAL_SIZE', 1)))
    os.environ['LOCAL_RANK'] = str(local_rank)
    os.environ['LOCAL_SIZE'] = str(local_size)
    os.environ['CUDA_VISIBLE_DEVICES'] = str(local_rank)
    _set_comm_env_defaults()

    argv = sys.argv[1:]
    if not argv:
        raise SystemExit('usage: python3 -m tutel.launcher.execl <script or -m module> [args...]')
    if re.match(r'^-m$', argv[0]):
        cmd_args = [sys.executable] + argv
    else:
        cmd_args = [sys.executable, '-u'] + argv
    os.execl(cmd_args[0], *cmd_args)


if __name__ == '__main__':
    main()
