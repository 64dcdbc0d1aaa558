# Copyright (c) Alibaba, Inc. and its affiliates.
import datetime
import gc
import os
import re
import time
import uuid
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from transformers.integrations import is_deepspeed_zero3_enabled
from transformers.utils import strtobool

from .env import get_dist_setting, is_dist, is_dist_ta, is_local_master, is_master
from .logger import get_logger

logger = get_logger()


def _find_local_mac() -> str:
    mac = uuid.getnode()
    return ':'.join(('%012x' % mac)[i:i + 2] for i in range(0, 12, 2))


def get_n_params_grads(model) -> Tuple[List[int], List[int]]:
    n_params, n_grads = [], []
    for p in model.parameters():
        if is_deepspeed_zero3_enabled():
            import deepspeed
            context = deepspeed.zero.GatheredParameters(p)
        else:
            context = nullcontext()
        with context:
            n_params.append(p.numel())
            n_grads.append(p.numel() if p.requires_grad else 0)
    return n_params, n_grads


def get_model_parameter_info(model: nn.Module, name: Optional[str] = None) -> str:
    n_params, n_grads = get_n_params_grads(model)
    n_params = sum(n_params)
    n_grads = sum(n_grads)
    n_buffers = sum(p.numel() for p in model.buffers())
    if name is None:
        name = model.__class__.__name__
    n_params /= 1e6
    n_grads /= 1e6
    n_buffers /= 1e6
    s = (f'{name}: '
         f'{n_params:.4f}M Params ({n_grads:.4f}M Trainable '
         f'[{100 * n_grads / n_params:.4f}%]), '
         f'{n_buffers:.4f}M Buffers.')
    return s


def find_sub_module(module: torch.nn.Module, module_name: str) -> List[torch.nn.Module]:
    _modules = list()
    for name, sub_module in module.named_modules():
        if not name:
            continue
        if name.endswith(module_name):
            _modules.append(sub_module)
    return _modules


def get_device(local_rank: Optional[Union[str, int]] = None) -> str:
    if local_rank is None:
        local_rank = max(0, get_dist_setting()[1])
    local_rank = str(local_rank)
    if torch.cuda.is_available():
        device = 'cuda:{}'.format(local_rank)
    elif torch.backends.mps.is_available():
        device = 'mps:{}'.format(local_rank)
    else:
        device = 'cpu'
    return device


def get_current_device():
    return torch.cuda.current_device() if torch.cuda.is_available() else 'cpu'


def set_device(local_rank: Optional[Union[str, int]] = None):
    if local_rank is None:
        local_rank = max(0, get_dist_setting()[1])
    torch.cuda.set_device(local_rank)


def get_device_count() -> int:
    return torch.cuda.device_count()


def get_cuda_visible_devices() -> List[int]:
    env = os.environ.get('CUDA_VISIBLE_DEVICES')
    if env is None:
        return list(range(get_device_count()))
    return [int(d) for d in env.split(',') if d.strip()]


def time_synchronize() -> float:
    torch.cuda.synchronize()
    return time.perf_counter()  # second


def empty_cache():
    gc.collect()
    torch.cuda.empty_cache()


def seed_everything(seed: int, full_determinism: bool = False):
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    if full_determinism:
        os.environ['CUBLAS_WORKSPACE_CONFIG'] = ':4096:8'
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def init_process_group(backend: Optional[str] = None, timeout: int = 18000000):
    if dist.is_initialized():
        return
    set_device()
    if backend is None:
        backend = 'nccl'
    dist.init_process_group(backend=backend, timeout=datetime.timedelta(seconds=timeout))


def is_mp() -> bool:
    if is_dist_ta():
        return False
    if strtobool(os.environ.get('USE_FAST_INFERENCE', 'false')):
        return False
    n_gpu = get_device_count()
    local_world_size = get_dist_setting()[3]
    assert n_gpu % local_world_size == 0, f'n_gpu: {n_gpu}, local_world_size: {local_world_size}'
    if n_gpu // local_world_size >= 2:
        return True
    return False


def is_mp_ddp() -> bool:
    if is_dist() and is_mp():
        logger.info('Using MP(device_map) + DDP')
        return True
    return False


def get_max_memory(device_ids: List[int], memory_ratio: float = 0.95) -> Dict[int, str]:
    max_memory = {}
    for device_id in device_ids:
        free, total = torch.cuda.mem_get_info(device_id)
        max_memory[device_id] = f'{int(total * memory_ratio / 1024**3)}GiB'
    max_memory['cpu'] = '200GiB'
    return max_memory


@contextmanager
def safe_ddp_context(hash_id: Optional[str], use_barrier: bool = False):
    if use_barrier and dist.is_initialized():
        if is_local_master():
            yield
            dist.barrier()
        else:
            dist.barrier()
            yield
    else:
        yield


def to_device(inputs: Any, device: torch.device, non_blocking: bool = False) -> Any:
    """Move inputs to a device"""
    if callable(getattr(inputs, 'to', None)):
        return inputs.to(device=device, non_blocking=non_blocking)

    if isinstance(inputs, dict):
        res = {}
        for k, v in inputs.items():
            res[k] = to_device(v, device, non_blocking)
    elif isinstance(inputs, (tuple, list)):
        res = []
        for b in inputs:
            res.append(to_device(b, device, non_blocking))
    else:
        res = inputs
    return res


def gc_collect() -> None:
    gc.collect()
    if torch.cuda.is_initialized():
        torch.cuda.ipc_collect()
