# Copyright (c) Microsoft Corporation.
# Licensed under the MIT license.

import logging
import os
import re
import sys
import time

import torch

from .impls.communicate import create_groups_from_world, get_world_rank, get_world_size


def init_data_model_parallel(group_count=1, backend="nccl"):
    """Initialise torch.distributed (torchrun or mpirun) and carve the world into
    `group_count` data-parallel groups of model-parallel ranks."""
    result = create_groups_from_world(group_count=group_count, include_init=backend)
    result.is_cuda = (result.local_device is not None and result.local_device.type == "cuda")

    logging.critical(f"Registering device global rank {result.global_rank}: data_rank = {result.data_rank}, model_rank = {result.model_rank}")
    init_data_model_parallel.default_env = result

    def on_quit():
        sys.stdout.flush()
        sys.stderr.flush()
        # Some torch releases hang in process-group teardown after all_to_all_single;
        # skip the teardown entirely when the builtin collective was used.
        if getattr(result, "use_builtin_all_to_all", False):
            os._exit(0)

    import atexit
    atexit.register(lambda *args: on_quit())
    return result


def get_local_session():
    if not hasattr(init_data_model_parallel, "default_env"):
        raise Exception("Current session is not initialized with: system.init_data_model_parallel() from tutel. Please try with: system.record_time(is_cuda=False)")
    return init_data_model_parallel.default_env


def record_time(is_cuda=None):
    if is_cuda is None:
        is_cuda = get_local_session().is_cuda
    if is_cuda:
        torch.cuda.synchronize()
    return time.time()


def apply_rank_size_from_pattern(filename, rank, size, create_dir=True):
    if not re.search(r"\{rank\}", filename):
        logging.warning('Keyword `{rank}` is not found in file pattern: %s, which may cause collision in file access.' % filename)

    filename = re.sub(r"\{rank\}", str(rank), re.sub(r"\{size\}", str(size), filename))
    if create_dir:
        filedir = os.path.dirname(filename)
        if filedir:
            try:
                os.makedirs(filedir)
            except FileExistsError:
                pass
    return filename


def save(t, path):
    env = get_local_session()
    npy_path = apply_rank_size_from_pattern(path, rank=env.global_rank, size=env.global_size)
    torch.save({k: v.detach().cpu() for k, v in t.state_dict().items()}, npy_path)


def load(model, path, strict=True):
    env = get_local_session()
    npy_path = apply_rank_size_from_pattern(path, rank=env.global_rank, size=env.global_size, create_dir=False)
    state_dict = torch.load(npy_path, map_location=f"cuda:{env.local_device.index}")
    missing, unexpected = model.load_state_dict(state_dict, strict=strict)
    if env.global_rank == 0 and (missing or unexpected):
        logging.warning(f"tutel.system.load: missing={missing} unexpected={unexpected}")
    return model


def cast(x, dtype):
    if dtype is None or x.dtype == dtype:
        return x
    return x.to(dtype)


def to_device(module, env=None):
    env = env or get_local_session()
    if env.local_device is None:
        return module
    return module.to(env.local_device)


def barrier(group=None):
    if get_world_size(group) > 1:
        torch.distributed.barrier(group=group)


def print_rank0(*args, **kwargs):
    if get_world_rank() == 0:
        print(*args, **kwargs)


def device_summary(env=None):
    env = env or get_local_session()
    if not env.is_cuda:
        return f"[rank {env.global_rank}] device = {env.local_device}"
    props = torch.cuda.get_device_properties(env.local_device)
    return (f"[rank {env.global_rank}] {props.name}: {props.total_memory // 2**20} MiB, "
            f"{props.multi_processor_count} SMs, capability {props.major}.{props.minor}")
