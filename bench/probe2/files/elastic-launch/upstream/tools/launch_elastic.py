#!/usr/bin/env python
"""Multi-node launcher used by the training cluster.

Sets communication environment variables, then starts one worker per local GPU through
torch.distributed.elastic. Workers call `setup_worker()` first thing.

    python tools/launch_elastic.py --nnodes 4 --rdzv-endpoint head-node:29400 -- train.py --cfg cfg.yaml
"""
import argparse
import datetime
import logging
import os
import socket
import sys
import uuid

import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record
from torch.distributed.launcher.api import LaunchConfig, elastic_launch

log = logging.getLogger("launch")

COMM_ENV_DEFAULTS = {
    # verbose communicator logs on first run of a new cluster
    "NCCL_DEBUG": "WARN",
    # InfiniBand: pick the right HCA and GID for RoCE
    "NCCL_IB_HCA": "mlx5",
    "NCCL_IB_GID_INDEX": "3",
    "NCCL_SOCKET_IFNAME": "eth0",
    # fail fast instead of hanging forever on a dead peer
    "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
    "NCCL_TIMEOUT": "1800",
    # Megatron-style overlap needs a single hardware queue
    "CUDA_DEVICE_MAX_CONNECTIONS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "OMP_NUM_THREADS": "8",
}


def apply_comm_env(overrides=None):
    for k, v in COMM_ENV_DEFAULTS.items():
        os.environ.setdefault(k, v)
    for kv in overrides or []:
        k, v = kv.split("=", 1)
        os.environ[k] = v
    if os.environ.get("DEBUG_SYNC") == "1":
        os.environ["CUDA_LAUNCH_BLOCKING"] = "1"


def local_world_size():
    n = torch.cuda.device_count()
    if n == 0:
        raise RuntimeError("no CUDA devices visible on this node")
    return n


def setup_worker(timeout_minutes=30):
    """Called at the top of every worker process (rank/world info comes from torchelastic env)."""
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", timeout=datetime.timedelta(minutes=timeout_minutes))
    if dist.get_backend() == "nccl":
        # warm up the communicator so the first real collective is not slow
        t = torch.ones(1, device=f"cuda:{local_rank}")
        dist.all_reduce(t)
    dist.barrier()
    log.info("rank %d/%d on %s (local %d) ready", dist.get_rank(), dist.get_world_size(), socket.gethostname(),
             local_rank)
    return torch.device("cuda", local_rank)


def cpu_group():
    """A gloo group for object collectives / barriers that should not touch the accelerator."""
    return dist.new_group(backend="gloo")


def teardown_worker():
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def parse_args(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--nnodes", default="1", help="N or MIN:MAX for elastic jobs")
    p.add_argument("--nproc-per-node", type=int, default=None, help="defaults to the number of local GPUs")
    p.add_argument("--rdzv-endpoint", default="localhost:29400")
    p.add_argument("--rdzv-backend", default="c10d")
    p.add_argument("--run-id", default=None)
    p.add_argument("--max-restarts", type=int, default=3)
    p.add_argument("--env", action="append", default=[], help="extra KEY=VALUE for workers")
    p.add_argument("script")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    return p.parse_args(argv)


def _run_script(script, script_args):
    import runpy
    sys.argv = [script] + list(script_args)
    runpy.run_path(script, run_name="__main__")


@record
def main(argv=None):
    args = parse_args(argv if argv is not None else sys.argv[1:])
    apply_comm_env(args.env)

    if ":" in args.nnodes:
        min_nodes, max_nodes = (int(x) for x in args.nnodes.split(":"))
    else:
        min_nodes = max_nodes = int(args.nnodes)

    nproc = args.nproc_per_node or local_world_size()
    config = LaunchConfig(
        min_nodes=min_nodes,
        max_nodes=max_nodes,
        nproc_per_node=nproc,
        run_id=args.run_id or str(uuid.uuid4())[:8],
        rdzv_endpoint=args.rdzv_endpoint,
        rdzv_backend=args.rdzv_backend,
        max_restarts=args.max_restarts,
        monitor_interval=5,
        start_method="spawn",
    )
    log.info("launching %d workers/node on %s (nodes %d..%d), NCCL_DEBUG=%s", nproc, socket.gethostname(),
             min_nodes, max_nodes, os.environ.get("NCCL_DEBUG"))
    elastic_launch(config=config, entrypoint=_run_script)(args.script, args.script_args)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    main()
