# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
Main entry point for model training. Please refer to README.md for usage instructions.

Example:
    CUDA_VISIBLE_DEVICES=0,1 python3 main.py \
        --gin_config_file=configs/ml-1m/hstu-sampled-softmax-n128-final.gin \
        --master_port=12345

One training process is spawned per visible GPU; the rank of each process is passed
to ``train_fn`` as its first positional argument by ``mp.spawn``.
"""

import logging
import os

from typing import List, Optional

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"  # Hide excessive tensorflow debug messages
import sys

import fbgemm_gpu  # noqa: F401 [believed to be needed for jagged ops in spawned workers]

import gin

import torch
import torch.multiprocessing as mp

from absl import app, flags

from generative_recommenders.research.trainer.train import train_fn

logging.basicConfig(stream=sys.stdout, level=logging.INFO)


def delete_flags(FLAGS, keys_to_delete: List[str]) -> None:  # pyre-ignore [2]
    keys = [key for key in FLAGS._flags()]
    for key in keys:
        if key in keys_to_delete:
            delattr(FLAGS, key)


delete_flags(flags.FLAGS, ["gin_config_file", "master_port", "num_gpus"])
flags.DEFINE_string("gin_config_file", None, "Path to the config file.")
flags.DEFINE_integer("master_port", 12355, "Master port.")
flags.DEFINE_integer(
    "num_gpus",
    None,
    "Number of GPUs (worker processes) to use; defaults to all visible devices.",
)
FLAGS = flags.FLAGS  # pyre-ignore [5]


def mp_train_fn(
    rank: int,
    world_size: int,
    master_port: int,
    gin_config_file: Optional[str],
) -> None:
    if gin_config_file is not None:
        # Hack as absl doesn't support flag parsing inside multiprocessing.
        logging.info(f"Rank {rank}: loading gin config from {gin_config_file}")
        gin.parse_config_file(gin_config_file)

    train_fn(rank, world_size, master_port)


def _main(argv) -> None:  # pyre-ignore [2]
    world_size = FLAGS.num_gpus
    if world_size is None:
        world_size = torch.cuda.device_count()
    if world_size < 1:
        raise RuntimeError("No accelerator found; this trainer does not support CPU-only runs.")

    logging.info(
        f"Spawning {world_size} training processes (master_port={FLAGS.master_port})"
    )
    mp.set_start_method("forkserver")
    mp.spawn(
        mp_train_fn,
        args=(world_size, FLAGS.master_port, FLAGS.gin_config_file),
        nprocs=world_size,
        join=True,
    )


def main() -> None:
    app.run(_main)


if __name__ == "__main__":
    main()
