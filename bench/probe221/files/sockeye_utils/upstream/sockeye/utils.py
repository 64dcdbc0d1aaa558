# Copyright 2017--2023 Amazon.com, Inc. or its affiliates. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License"). You may not
# use this file except in compliance with the License. A copy of the License
# is located at
#
#     http://aws.amazon.com/apache2.0/
#
# or in the "license" file accompanying this file. This file is distributed on
# an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either
# express or implied. See the License for the specific language governing
# permissions and limitations under the License.

"""
A set of utility methods.
"""
import argparse
import logging
import os
import random
import shutil
import subprocess
import sys
from contextlib import contextmanager
from typing import Dict, Iterator, List, Optional

import numpy as np
import torch as pt
import torch.distributed

from . import constants as C

logger = logging.getLogger(__name__)


class SockeyeError(Exception):
    pass


def check_condition(condition: bool, error_message: str):
    """
    Check the condition and if it is not met, exit with the given error message
    and error_code, similar to assertions.

    :param condition: Condition to check.
    :param error_message: Error message to show to the user.
    """
    if not condition:
        raise SockeyeError(error_message)


def seed_rngs(seed: int) -> None:
    """
    Seed the random number generators (Python, Numpy and PyTorch).

    :param seed: The random seed.
    """
    logger.info(f"Random seed: {seed}")
    np.random.seed(seed)
    random.seed(seed)
    pt.random.manual_seed(seed)
    # Note: `pt.random.manual_seed` already calls `pt.cuda.manual_seed_all`.


def init_device(args: argparse.Namespace) -> pt.device:
    """
    Return the device to use for training or inference.

    :param args: Arguments as returned by argparse.
    :return: The device.
    """
    use_cpu = args.use_cpu
    if not pt.cuda.is_available():
        logger.info("CUDA not available, using cpu")
        use_cpu = True
    device = pt.device('cpu') if use_cpu else pt.device('cuda', args.device_id)
    if not use_cpu:
        # Ensure that GPU operations use the correct device by default
        pt.cuda.set_device(device)
        if args.tf32:
            logger.info("CUDA: allow tf32 (float32 but with 10 bits precision)")
        pt.backends.cuda.matmul.allow_tf32 = args.tf32
        pt.backends.cudnn.allow_tf32 = args.tf32
    return device


def get_num_gpus() -> int:
    """
    Gets the number of GPUs available on the host.

    :return: The number of GPUs on the system.
    """
    return pt.cuda.device_count()


def get_gpu_memory_usage(device_ids: List[int]) -> Dict[int, tuple]:
    """
    Returns used and total memory for GPUs identified by the given device ids.

    :param device_ids: List of device ids to query.
    :return: Dictionary mapping device id to (used, total) memory in MiB.
    """
    if not device_ids:
        return {}
    if shutil.which("nvidia-smi") is None:
        logger.warning("Couldn't find nvidia-smi, therefore we assume no GPUs are available.")
        return {}

    ids = ",".join(str(i) for i in device_ids)
    query = "--query-gpu=index,memory.used,memory.total"
    format_arg = "--format=csv,noheader,nounits"
    try:
        sp = subprocess.Popen(['nvidia-smi', query, format_arg, "-i", ids],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        result = sp.communicate()[0].decode("utf-8").rstrip().split("\n")
    except OSError:
        logger.exception("Failed calling nvidia-smi to query memory usage.")
        return {}
    try:
        memory_data = {}
        for line in result:
            gpu_id, mem_used, mem_total = line.split(",")
            memory_data[int(gpu_id)] = (int(mem_used), int(mem_total))
    except ValueError:
        logger.exception("Failed parsing nvidia-smi output %s", "\n".join(result))
        return {}
    return memory_data


def log_gpu_memory_usage(memory_data: Dict[int, tuple]):
    log_str = " ".join(
        "GPU %d: %d/%d MB (%.2f%%)" % (k, v[0], v[1], v[0] * 100.0 / v[1]) for k, v in memory_data.items())
    logger.info(log_str)


def is_distributed() -> bool:
    return pt.distributed.is_initialized() and pt.distributed.get_world_size() > 1


def is_primary_worker() -> bool:
    """
    True when current process is the primary worker (rank 0) or the only
    worker (not running in distributed mode)
    """
    return not is_distributed() or pt.distributed.get_rank() == 0


def get_local_rank() -> int:
    return int(os.environ[C.DIST_ENV_LOCAL_RANK])


def all_gather_object(obj) -> List:
    """Gather each worker's instance of an object, returned as a list"""
    obj_list = [None] * pt.distributed.get_world_size()
    pt.distributed.all_gather_object(obj_list, obj)
    return obj_list


@contextmanager
def no_context():
    """
    No-op context manager that can be used in "with" statements
    """
    yield None


def fault_tolerant_symlink(src: str, dst: str, max_retries: int = 6):
    """
    Attempts to create a symbolic link from source to destination.
    If a FileExistsError occurs, it will remove the destination and retry.
    """
    retries = 0
    while True:
        try:
            os.symlink(src, dst)
            return
        except FileExistsError as error:
            if retries >= max_retries:
                break
            logger.warning(f"Error detected when calling symlink: {error}. Retrying.")
            os.remove(dst)
            retries += 1
    raise OSError(f"Max retries of {max_retries} exceeded when trying to create a symlink from {src} to {dst}.")


def count_seq_len(sample: str, count_type: str = 'char', replace_tokens: Optional[List] = None) -> int:
    """
    Count sequence length, after replacing (optional) token/s.
    """
    if replace_tokens is not None:
        for tokens in replace_tokens:
            sample = sample.replace(tokens, '')
    if count_type == 'char':
        return len(sample)
    if count_type == 'word':
        return len(sample.split())
    raise SockeyeError("Unknown count_type: %s" % count_type)


def smart_open_lines(paths: List[str]) -> Iterator[str]:
    for path in paths:
        with open(path, encoding="utf-8") as f:
            yield from f


def log_basic_info(args) -> None:
    """
    Log basic information like version number, arguments, etc.

    :param args: Arguments as returned by argparse.
    """
    logger.info("Sockeye: %s", sys.argv[0])
    logger.info("PyTorch: %s (CUDA %s, cuDNN %s)", pt.__version__, pt.version.cuda,
                pt.backends.cudnn.version() if pt.backends.cudnn.is_available() else "n/a")
    logger.info("Command: %s", " ".join(sys.argv))
    logger.info("Arguments: %s", args)
