#!/usr/bin/env python
# -*- coding:utf-8 _*-
"""Launch a script with torchrun on one or more nodes.

Single node, all visible GPUs:
    python torch_dist_run.py main.py -d dataset/time-300b --model_path Maple728/TimeMoE-50M

Multi node (run on every node):
    WORLD_SIZE=2 RANK=0 MASTER_ADDR=10.0.0.1 python torch_dist_run.py main.py ...

The number of processes per node defaults to the number of visible GPUs.
"""
import os
import shlex
import subprocess
import sys


def _gpu_count_from_env():
    visible = os.getenv("CUDA_VISIBLE_DEVICES")
    if visible is None or visible.strip() == "":
        return None
    return len([d for d in visible.split(",") if d.strip() != ""])


def _gpu_count_from_smi():
    try:
        out = subprocess.check_output(["nvidia-smi", "--list-gpus"], stderr=subprocess.DEVNULL)
    except (OSError, subprocess.CalledProcessError):
        return None
    return len([line for line in out.decode().splitlines() if line.startswith("GPU ")])


def get_num_gpus_per_node():
    n = os.getenv("NPROC_PER_NODE")
    if n is not None:
        return int(n)
    n = _gpu_count_from_env()
    if n is not None:
        return n
    n = _gpu_count_from_smi()
    if n is not None:
        return n
    import torch

    return torch.cuda.device_count()


def set_default_comm_env():
    # sane NCCL defaults for our A100/H100 clusters; can be overridden from the shell
    os.environ.setdefault("NCCL_DEBUG", "WARN")
    os.environ.setdefault("NCCL_IB_DISABLE", "0")
    os.environ.setdefault("NCCL_SOCKET_IFNAME", "eth0")
    os.environ.setdefault("NCCL_IB_TIMEOUT", "22")
    os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "8")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def build_command(script, script_args):
    num_nodes = int(os.getenv("WORLD_SIZE", "1"))
    node_rank = int(os.getenv("RANK", "0"))
    master_addr = os.getenv("MASTER_ADDR", "127.0.0.1")
    master_port = os.getenv("MASTER_PORT", "9899")
    nproc = get_num_gpus_per_node()
    if nproc < 1:
        raise RuntimeError("No GPU found: set NPROC_PER_NODE or CUDA_VISIBLE_DEVICES")

    cmd = [
        sys.executable, "-m", "torch.distributed.run",
        f"--nnodes={num_nodes}",
        f"--node_rank={node_rank}",
        f"--nproc_per_node={nproc}",
        f"--master_addr={master_addr}",
        f"--master_port={master_port}",
        script,
    ]
    return cmd + list(script_args)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(1)
    script, script_args = sys.argv[1], sys.argv[2:]
    set_default_comm_env()
    cmd = build_command(script, script_args)
    print("Launching:", " ".join(shlex.quote(c) for c in cmd), flush=True)
    ret = subprocess.run(cmd, env=os.environ.copy())
    sys.exit(ret.returncode)


if __name__ == "__main__":
    main()
