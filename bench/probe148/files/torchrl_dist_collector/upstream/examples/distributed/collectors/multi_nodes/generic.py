# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
"""Multi-node distributed data collection with submitit in contexts where jobs can't launch other jobs.

The default configuration will ask for 8 nodes with 1 GPU each and 32 procs / node.

It should reach a collection speed of roughly 15-25K fps, or better depending
on the cluster specs.

The logic of the script is the following: we create a `main()` function that
executes or code (in this case just a data collection but in practice a training
loop should be present).

Since this `main()` function cannot launch sub-jobs by design, we launch the script
from the jump host and pass the slurm specs to submitit.

*Note*:

  Although we don't go in much details into this in this script, the specs of the training
  node and the specs of the inference nodes can differ (look at the DEFAULT_SLURM_CONF
  and DEFAULT_SLURM_CONF_MAIN dictionaries below).

"""
import os
import time
from argparse import ArgumentParser

import torch
import tqdm
from torchrl._utils import logger as torchrl_logger
from torchrl.collectors.distributed import (
    DEFAULT_SLURM_CONF,
    DEFAULT_SLURM_CONF_MAIN,
    submitit_delayed_launcher,
)
from torchrl.collectors.collectors import (
    MultiSyncDataCollector,
    SyncDataCollector,
)
from torchrl.collectors.distributed import DistributedDataCollector
from torchrl.envs import EnvCreator, ParallelEnv
from torchrl.envs.libs.gym import GymEnv, set_gym_backend

parser = ArgumentParser()
parser.add_argument(
    "--partition", "-p", help="slurm partition to use", default="train"
)
parser.add_argument("--num_jobs", type=int, default=8, help="Number of jobs")
parser.add_argument("--tcp_port", type=int, default=1234, help="TCP port")
parser.add_argument(
    "--num_workers", type=int, default=8, help="Number of workers per node"
)
parser.add_argument(
    "--gpus_per_node",
    "--gpus-per-node",
    "-G",
    type=int,
    default=1,
    help="Number of GPUs per node. If greater than 0, the backend used will be NCCL.",
)
parser.add_argument(
    "--cpus_per_task",
    "--cpus-per-task",
    "-c",
    type=int,
    default=32,
    help="Number of CPUs per node.",
)
parser.add_argument(
    "--sync", action="store_true", help="Use --sync to collect data synchronously."
)
parser.add_argument(
    "--frames_per_batch",
    "--frames-per-batch",
    default=4000,
    type=int,
    help="Number of frames in each batch of data. Must be "
    "divisible by the product of nodes and workers if sync, by the number of "
    "workers otherwise.",
)
parser.add_argument(
    "--total_frames",
    "--total-frames",
    default=10_000_000,
    type=int,
    help="Total number of frames collected by the collector.",
)
parser.add_argument(
    "--time",
    "-t",
    default="1:00:00",
    help="Timeout for the nodes",
)
parser.add_argument(
    "--backend",
    "-b",
    default="gloo",
    help="Backend for the collector",
)
parser.add_argument("--env", "-e", default="ALE/Pong-v5", help="Gym environment")

if __name__ == "__main__":
    args = parser.parse_args()

    slurm_gpus_per_node = args.gpus_per_node
    slurm_time = args.time
    backend = args.backend

    DEFAULT_SLURM_CONF["slurm_gpus_per_node"] = slurm_gpus_per_node
    DEFAULT_SLURM_CONF["slurm_time"] = slurm_time
    DEFAULT_SLURM_CONF["slurm_cpus_per_task"] = args.cpus_per_task
    DEFAULT_SLURM_CONF["slurm_partition"] = args.partition
    DEFAULT_SLURM_CONF_MAIN["slurm_partition"] = args.partition
    DEFAULT_SLURM_CONF_MAIN["slurm_time"] = slurm_time

    num_jobs = args.num_jobs
    tcp_port = args.tcp_port
    num_workers = args.num_workers
    sync = args.sync
    total_frames = args.total_frames
    frames_per_batch = args.frames_per_batch

    device_str = "device" if num_workers <= 1 else "devices"
    if backend == "nccl":
        if num_workers <= 1:
            collector_kwargs = {device_str: "cuda:0"}
        else:
            collector_kwargs = {
                device_str: [f"cuda:{i}" for i in range(num_workers)],
                "storing_device": "cuda:0",
            }
    elif backend == "gloo":
        collector_kwargs = {device_str: "cpu"}
    else:
        raise NotImplementedError(
            f"device assignment not implemented for backend {backend}"
        )

    @submitit_delayed_launcher(num_jobs=num_jobs, backend=backend, tcpport=tcp_port)
    def main():
        from torchrl.collectors import MultiSyncDataCollector, SyncDataCollector
        from torchrl.collectors.distributed import DistributedDataCollector
        from torchrl.envs import EnvCreator, ParallelEnv
        from torchrl.envs.libs.gym import GymEnv, set_gym_backend

        collector_class = SyncDataCollector if num_workers == 1 else MultiSyncDataCollector
        device_count = torch.cuda.device_count()
        if device_count < num_workers and backend == "nccl":
            raise RuntimeError(
                f"Requested {num_workers} workers but only {device_count} GPUs are visible."
            )

        with set_gym_backend("gymnasium"):
            make_env = EnvCreator(lambda: GymEnv(args.env))
            if num_workers == 1:
                action_spec = make_env().action_spec
            else:
                action_spec = ParallelEnv(num_workers, make_env).action_spec

        collector = DistributedDataCollector(
            [make_env] * num_jobs,
            policy=None,
            collector_class=collector_class,
            collector_kwargs=collector_kwargs,
            frames_per_batch=frames_per_batch,
            total_frames=total_frames,
            backend=backend,
            sync=sync,
            tcp_port=tcp_port,
            launcher="submitit",
        )
        counter = 0
        pbar = tqdm.tqdm(total=collector.total_frames)
        for i, data in enumerate(collector):
            pbar.update(data.numel())
            pbar.set_description(f"data shape: {data.shape}, data device: {data.device}")
            if i >= 10:
                counter += data.numel()
            if i == 10:
                t0 = time.time()
        t1 = time.time()
        torchrl_logger.info(f"time elapsed: {t1-t0}s, rate: {counter/(t1-t0)} fps")
        collector.shutdown()
        exit()

    main()
