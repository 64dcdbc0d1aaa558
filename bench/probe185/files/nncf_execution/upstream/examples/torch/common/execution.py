# Copyright (c) 2023 Intel Corporation
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#      http://www.apache.org/licenses/LICENSE-2.0
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

import os
import random
from typing import Callable

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.backends import cudnn

from examples.common.sample_config import SampleConfig
from nncf.common.logging import nncf_logger


class ExecutionMode:
    CPU_ONLY = "cpu_only"
    SINGLE_GPU = "single_gpu"
    DISTRIBUTED = "distributed"
    MULTIPROCESSING_DISTRIBUTED = "multiprocessing_distributed"
    GPU_DATAPARALLEL = "gpu_dataparallel"


def get_execution_mode(config: SampleConfig) -> str:
    if config.cpu_only:
        return ExecutionMode.CPU_ONLY
    if config.gpu_id is not None:
        return ExecutionMode.SINGLE_GPU
    if "multiprocessing_distributed" in config and config.multiprocessing_distributed:
        return ExecutionMode.MULTIPROCESSING_DISTRIBUTED
    if config.world_size > 1:
        return ExecutionMode.DISTRIBUTED
    return ExecutionMode.GPU_DATAPARALLEL


def get_device(config: SampleConfig) -> torch.device:
    if config.execution_mode == ExecutionMode.CPU_ONLY:
        return torch.device("cpu")
    if config.current_gpu is not None:
        return torch.device("cuda:{}".format(config.current_gpu))
    return torch.device("cuda")


def prepare_model_for_execution(model, config: SampleConfig):
    model.to(config.device)

    if config.execution_mode == ExecutionMode.CPU_ONLY:
        return model

    if config.execution_mode in (ExecutionMode.DISTRIBUTED, ExecutionMode.MULTIPROCESSING_DISTRIBUTED):
        # For multiprocessing distributed training, DistributedDataParallel constructor
        # should always set the single device scope, otherwise,
        # DistributedDataParallel will use all available devices.
        if config.current_gpu is not None:
            torch.cuda.set_device(config.current_gpu)
            model.cuda(config.current_gpu)
            # When using a single GPU per process and per
            # DistributedDataParallel, we need to divide the batch size
            # ourselves based on the total number of GPUs we have
            config.batch_size = int(config.batch_size / config.ngpus_per_node)
            config.batch_size_val = int(config.batch_size_val / config.ngpus_per_node)
            config.workers = int(config.workers / config.ngpus_per_node)
            model = torch.nn.parallel.distributed.DistributedDataParallel(model, device_ids=[config.current_gpu])
        else:
            model.cuda()
            # DistributedDataParallel will divide and allocate batch_size to all
            # available GPUs if device_ids are not set
            model = torch.nn.parallel.DistributedDataParallel(model)

    if config.execution_mode == ExecutionMode.SINGLE_GPU:
        torch.cuda.set_device(config.current_gpu)  # no-op if configure_device already ran
        model = model.cuda(config.current_gpu)

    if config.execution_mode == ExecutionMode.GPU_DATAPARALLEL:
        model = torch.nn.DataParallel(model)

    return model


def set_seed(config: SampleConfig):
    if config.seed is not None:
        nncf_logger.warning(
            "You have chosen to seed training. This will turn on the CUDNN deterministic setting, "
            "which can slow down your training considerably! You may see unexpected behavior "
            "when restarting from checkpoints."
        )
        random.seed(config.seed)
        np.random.seed(config.seed)
        torch.manual_seed(config.seed)
        cudnn.deterministic = True
        cudnn.benchmark = False


def configure_device(current_gpu, config: SampleConfig):
    config.current_gpu = current_gpu
    config.distributed = config.execution_mode in (ExecutionMode.DISTRIBUTED, ExecutionMode.MULTIPROCESSING_DISTRIBUTED)
    if config.distributed:
        configure_distributed(config)

    config.device = get_device(config)

    if config.execution_mode == ExecutionMode.SINGLE_GPU:
        torch.cuda.set_device(current_gpu)


def configure_distributed(config: SampleConfig):
    if config.dist_url == "env://":
        config.update_from_env()
        config.rank = int(os.environ.get("RANK", config.rank))
    if config.execution_mode == ExecutionMode.MULTIPROCESSING_DISTRIBUTED:
        # For multiprocessing distributed training, rank needs to be the
        # global rank among all the processes
        config.rank = config.rank * config.ngpus_per_node + config.current_gpu

    dist.init_process_group(
        backend=config.dist_backend, init_method=config.dist_url, world_size=config.world_size, rank=config.rank
    )


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def start_worker(main_worker: Callable, config: SampleConfig):
    config.ngpus_per_node = torch.cuda.device_count()

    if config.execution_mode == ExecutionMode.MULTIPROCESSING_DISTRIBUTED:
        # Since we have ngpus_per_node processes per node, the total world_size
        # needs to be adjusted accordingly
        config.world_size = config.ngpus_per_node * config.world_size
        # Use torch.multiprocessing.spawn to launch distributed processes: the
        # main_worker process function
        mp.spawn(main_worker, nprocs=config.ngpus_per_node, args=(config,))
    else:
        # Simply call main_worker function
        main_worker(config.gpu_id, config)


def set_memory_fraction(config: SampleConfig):
    """Optional cap used by the nightly runners that share one GPU between several samples."""
    fraction = float(os.environ.get("NNCF_SAMPLE_GPU_MEMORY_FRACTION", "0"))
    if fraction > 0 and config.execution_mode != ExecutionMode.CPU_ONLY:
        torch.cuda.set_per_process_memory_fraction(fraction, config.current_gpu or 0)
