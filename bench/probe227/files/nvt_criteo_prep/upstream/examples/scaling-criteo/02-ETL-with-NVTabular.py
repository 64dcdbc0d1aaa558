#!/usr/bin/env python
# Copyright (c) 2021, NVIDIA CORPORATION.
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
# ==============================================================================
"""Scaling Criteo: ETL with NVTabular (exported from the notebook).

Reads the 24 days of Criteo click logs that 01-Download-Convert produced as parquet,
fits a Categorify/FillMissing/Normalize workflow on days 0-22 and writes
the transformed train/valid sets back to parquet for the PyTorch DLRM training.

A Dask-CUDA cluster with one worker per GPU is started; RMM pools are used so the
workers do not fragment device memory while shuffling.
"""
import argparse
import glob
import os
import shutil
import time
import warnings

import numpy as np

import nvtabular as nvt
import rmm
from dask.distributed import Client
from dask_cuda import LocalCUDACluster
from merlin.core.utils import device_mem_size, pynvml_mem_size
from merlin.schema import Tags
from nvtabular.ops import (
    Categorify,
    Clip,
    FillMissing,
    LambdaOp,
    Normalize,
    AddMetadata,
)

warnings.filterwarnings("ignore", category=UserWarning)

CONTINUOUS_COLUMNS = ["I" + str(x) for x in range(1, 14)]
CATEGORICAL_COLUMNS = ["C" + str(x) for x in range(1, 27)]
LABEL_COLUMNS = ["label"]
COLUMNS = LABEL_COLUMNS + CONTINUOUS_COLUMNS + CATEGORICAL_COLUMNS


def parse_args():
    parser = argparse.ArgumentParser(description="NVTabular ETL for Criteo")
    parser.add_argument("--input-dir", default=os.environ.get("INPUT_DATA_DIR", "/raid/data/criteo/converted/criteo"))
    parser.add_argument("--output-dir", default=os.environ.get("OUTPUT_DATA_DIR", "/raid/data/criteo/test_dask/output"))
    parser.add_argument("--stats-dir", default=None)
    parser.add_argument("--num-days", type=int, default=24)
    parser.add_argument("--freq-limit", type=int, default=15)
    parser.add_argument(
        "--devices",
        default=os.environ.get("CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7"),
        help="Comma-separated list of GPU ids to start Dask-CUDA workers on",
    )
    parser.add_argument("--device-limit-frac", type=float, default=0.7, help="Spill threshold (fraction of GPU memory)")
    parser.add_argument("--device-pool-frac", type=float, default=0.8, help="RMM pool size (fraction of GPU memory)")
    parser.add_argument("--part-mem-frac", type=float, default=0.15, help="Dataset partition size (fraction of GPU memory)")
    parser.add_argument("--protocol", default="tcp", choices=["tcp", "ucx"])
    parser.add_argument("--dashboard-port", default="8787")
    parser.add_argument("--shuffle", default="PER_PARTITION", choices=["PER_PARTITION", "PER_WORKER", "NONE"])
    return parser.parse_args()


def setup_rmm_pool(client, pool_size):
    """Re-initialise RMM with a pool on every worker (pool size rounded down to 256 bytes)."""
    pool_size = pool_size // 256 * 256
    client.run(rmm.reinitialize, pool_allocator=True, initial_pool_size=pool_size)
    return None


def start_cluster(args):
    # Deploy a Single-Machine Multi-GPU Cluster
    device_size = device_mem_size(kind="total")
    device_limit = int(args.device_limit_frac * device_size)
    device_pool_size = int(args.device_pool_frac * device_size)
    part_size = int(args.part_mem_frac * device_size)

    dashboard_port = args.dashboard_port
    visible_devices = args.devices
    for dev in visible_devices.split(","):
        fmem = pynvml_mem_size(kind="free", index=int(dev))
        used = (device_size - fmem) / 1e9
        if used > 1.0:
            warnings.warn(f"BEWARE - {used} GB is already occupied on device {int(dev)}!")

    cluster = None
    if cluster is None:
        cluster = LocalCUDACluster(
            protocol=args.protocol,
            n_workers=len(visible_devices.split(",")),
            CUDA_VISIBLE_DEVICES=visible_devices,
            device_memory_limit=device_limit,
            local_directory=os.path.join(args.output_dir, "dask-workspace"),
            dashboard_address=":" + dashboard_port,
            rmm_pool_size=(device_pool_size // 256) * 256,
        )
    client = Client(cluster)
    return client, part_size


def build_workflow(args, stats_path):
    cat_features = (
        CATEGORICAL_COLUMNS
        >> Categorify(out_path=stats_path, freq_threshold=args.freq_limit, max_size=10_000_000)
        >> AddMetadata(tags=[Tags.CATEGORICAL])
    )
    cont_features = (
        CONTINUOUS_COLUMNS
        >> FillMissing()
        >> Clip(min_value=0)
        >> LambdaOp(lambda col: np.log(col + 1))
        >> Normalize()
    )
    features = LABEL_COLUMNS + cont_features + cat_features
    return nvt.Workflow(features)


def main():
    args = parse_args()
    input_path = args.input_dir
    base_dir = args.output_dir
    dask_workdir = os.path.join(base_dir, "workdir")
    output_path = os.path.join(base_dir, "output")
    stats_path = args.stats_dir or os.path.join(base_dir, "stats")

    # Make sure we have a clean worker space for Dask
    if os.path.isdir(dask_workdir):
        shutil.rmtree(dask_workdir)
    os.makedirs(dask_workdir)

    # Make sure we have a clean stats space for Dask
    if os.path.isdir(stats_path):
        shutil.rmtree(stats_path)
    os.mkdir(stats_path)

    # Make sure we have a clean output path
    if os.path.isdir(output_path):
        shutil.rmtree(output_path)
    os.mkdir(output_path)

    fname = "day_{}.parquet"
    num_days = len([i for i in os.listdir(input_path) if re_match(fname, i) is not None])
    train_paths = [os.path.join(input_path, fname.format(day)) for day in range(num_days - 1)]
    valid_paths = [os.path.join(input_path, fname.format(day)) for day in range(num_days - 1, num_days)]
    print(train_paths)
    print(valid_paths)

    client, part_size = start_cluster(args)
    print(client)

    workflow = build_workflow(args, stats_path)

    # Create the datasets, we use 15% of the GPU memory per partition
    train_dataset = nvt.Dataset(train_paths, engine="parquet", part_size=part_size)
    valid_dataset = nvt.Dataset(valid_paths, engine="parquet", part_size=part_size)

    output_train_dir = os.path.join(output_path, "train/")
    output_valid_dir = os.path.join(output_path, "valid/")
    for d in (output_train_dir, output_valid_dir):
        os.makedirs(d, exist_ok=True)

    t0 = time.time()
    workflow.fit(train_dataset)
    print(f"fit took {time.time() - t0:.1f}s")

    shuffle = None if args.shuffle == "NONE" else getattr(nvt.io.Shuffle, args.shuffle)
    t0 = time.time()
    workflow.transform(train_dataset).to_parquet(
        output_path=output_train_dir,
        shuffle=shuffle,
        out_files_per_proc=8,
    )
    workflow.transform(valid_dataset).to_parquet(output_path=output_valid_dir)
    print(f"transform took {time.time() - t0:.1f}s")

    workflow.save(os.path.join(output_path, "workflow"))
    print(glob.glob(output_train_dir + "*"))
    client.close()


def re_match(pattern, name):
    import re

    return re.match(pattern.replace("{}", r"\d+"), name)


if __name__ == "__main__":
    main()
