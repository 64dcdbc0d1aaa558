# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
"""Minimal distributed utilities, assuming one process per GPU and
`torchrun` / Dora / submitit style environment variables.

Most functions are no-ops when running on a single process, so that
training code can call them unconditionally.
"""
from contextlib import contextmanager
import logging
import os
import pickle
import typing as tp

import torch
from torch import distributed
from torch.nn import functional as F

logger = logging.getLogger(__name__)


def rank() -> int:
    if distributed.is_initialized():
        return distributed.get_rank()
    return int(os.environ.get('RANK', 0))


def world_size() -> int:
    if distributed.is_initialized():
        return distributed.get_world_size()
    return int(os.environ.get('WORLD_SIZE', 1))


def is_distributed() -> bool:
    return world_size() > 1


def is_rank_zero() -> bool:
    return rank() == 0


def init(backend='nccl'):
    """Initialize DDP. Reads `RANK`, `WORLD_SIZE`, `MASTER_ADDR` and `MASTER_PORT`
    (set by torchrun or by the Dora launcher); does nothing when `WORLD_SIZE` is missing or 1.
    """
    if distributed.is_initialized():
        return
    if 'WORLD_SIZE' not in os.environ:
        logger.debug("WORLD_SIZE not set, not initializing distributed.")
        return
    world = int(os.environ['WORLD_SIZE'])
    if world == 1:
        return
    rank_ = int(os.environ['RANK'])
    local_rank = int(os.environ.get('LOCAL_RANK', rank_ % torch.cuda.device_count()))
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
    else:
        backend = 'gloo'
        logger.warning("No GPU found, falling back to the gloo backend (CPU training).")
    distributed.init_process_group(
        backend=backend,
        init_method='env://',
        world_size=world,
        rank=rank_)
    logger.info("Distributed init done: rank %d / %d, local rank %d, backend %s",
                rank_, world, local_rank, backend)


def barrier():
    if is_distributed():
        distributed.barrier()


def _backend_device() -> torch.device:
    # collectives on NCCL need the tensors on the current GPU, gloo works on CPU tensors
    return torch.device('cuda') if distributed.get_backend() == 'nccl' else torch.device('cpu')


def average_metrics(metrics: tp.Dict[str, float], count=1.):
    """Average a dictionary of metrics across all workers, using the optional
    `count` as unnormalized weight.
    """
    if not is_distributed():
        return metrics
    keys, values = zip(*metrics.items())
    tensor = torch.tensor(list(values) + [1], device='cuda', dtype=torch.float32)
    tensor *= count
    all_reduce(tensor)
    averaged = (tensor[:-1] / tensor[-1]).cpu().tolist()
    return dict(zip(keys, averaged))


def all_reduce(tensor: torch.Tensor, op=distributed.ReduceOp.SUM):
    if is_distributed():
        return distributed.all_reduce(tensor, op)


def _is_complex_or_float(tensor):
    return torch.is_floating_point(tensor) or torch.is_complex(tensor)


def _check_number_of_params(params: tp.List[torch.Tensor]):
    # utility function to check that the number of params in all workers is the same,
    # and thus avoid a deadlock with distributed all reduce.
    if not is_distributed() or not params:
        return
    tensor = torch.tensor([len(params)], device=params[0].device, dtype=torch.long)
    all_reduce(tensor)
    if tensor.item() != len(params) * world_size():
        # If not all the workers have the same number, for at least one of them,
        # this inequality will be verified.
        raise RuntimeError(f"Mismatch in number of params: ours is {len(params)}, "
                           "at least one worker has a different one.")


def broadcast_tensors(tensors: tp.Iterable[torch.Tensor], src: int = 0):
    """Broadcast the tensors from the given parameters to all workers.
    This can be used to ensure that all workers have the same model to start with.
    """
    if not is_distributed():
        return
    tensors = [tensor for tensor in tensors if _is_complex_or_float(tensor)]
    _check_number_of_params(tensors)
    handles = []
    for tensor in tensors:
        handle = distributed.broadcast(tensor.data, src=src, async_op=True)
        handles.append(handle)
    for handle in handles:
        handle.wait()


def broadcast_object(obj: tp.Any, src: int = 0) -> tp.Any:
    """Broadcast any picklable object from `src` (small objects only, e.g. configs or stage names)."""
    if not is_distributed():
        return obj
    device = _backend_device()
    if rank() == src:
        data = pickle.dumps(obj)
        size = torch.tensor([len(data)], device=device, dtype=torch.long)
    else:
        size = torch.empty(1, device=device, dtype=torch.long)
    distributed.broadcast(size, src=src)
    if rank() == src:
        buffer = torch.frombuffer(bytearray(data), dtype=torch.uint8).to(device)
    else:
        buffer = torch.empty(int(size.item()), device=device, dtype=torch.uint8)
    distributed.broadcast(buffer, src=src)
    return pickle.loads(buffer.cpu().numpy().tobytes())


def sync_buffer(buffers, average=True):
    """
    Sync grad for buffers. If average is False, broadcast instead of averaging.
    """
    if not is_distributed():
        return
    handles = []
    for buffer in buffers:
        if torch.is_floating_point(buffer.data):
            if average:
                handle = distributed.all_reduce(
                    buffer.data, op=distributed.ReduceOp.SUM, async_op=True)
            else:
                handle = distributed.broadcast(
                    buffer.data, src=0, async_op=True)
            handles.append((buffer, handle))
    for buffer, handle in handles:
        handle.wait()
        if average:
            buffer.data /= world_size()


def average_tensors(tensors):
    sync_buffer(tensors, average=True)


def sync_grad(params):
    """
    Simpler alternative to DistributedDataParallel, that doesn't rely
    on any black magic. For simple models it can also be as fast.
    Just call this on your model parameters after the call to backward!
    """
    if not is_distributed():
        return
    handles = []
    for p in params:
        if p.grad is not None:
            handle = distributed.all_reduce(
                p.grad.data, op=distributed.ReduceOp.SUM, async_op=True)
            handles.append((p, handle))
    for p, handle in handles:
        handle.wait()
        p.grad.data /= world_size()


def sync_model(model, sync_buffers=True, average_buffers=True):
    sync_grad(model.parameters())
    if sync_buffers:
        sync_buffer(model.buffers(), average=average_buffers)


@contextmanager
def eager_sync_model(model, sync_buffers=True, average_buffers=True):
    """Same as `sync_model` but launches the all reduce for each parameter
    as soon as its gradient is available (through a backward hook), overlapping
    communication with the rest of the backward.
    """
    if not is_distributed():
        yield
        return
    params = [p for p in model.parameters() if p.requires_grad]
    _check_number_of_params(params)
    handles = []
    hooks = []

    def _callback(param, grad):
        handle = distributed.all_reduce(grad.data, op=distributed.ReduceOp.SUM, async_op=True)
        handles.append((param, grad, handle))

    for p in params:
        hooks.append(p.register_hook(lambda grad, p=p: _callback(p, grad)))
    try:
        yield
    finally:
        for hook in hooks:
            hook.remove()
        for param, grad, handle in handles:
            handle.wait()
            grad.data /= world_size()
        if sync_buffers:
            sync_buffer(model.buffers(), average=average_buffers)


def wrap(model, **kwargs):
    """Wrap a model with DistributedDataParallel if needed, using the current GPU."""
    if is_distributed():
        return torch.nn.parallel.DistributedDataParallel(
            model,
            device_ids=[torch.cuda.current_device()],
            output_device=torch.cuda.current_device(),
            **kwargs)
    return model


def loader(dataset, *args, shuffle=False, klass=torch.utils.data.DataLoader, **kwargs):
    """
    Create a dataloader properly in case of distributed training.
    If a gradient is going to be computed you must set `shuffle=True`.
    """
    if not is_distributed():
        return klass(dataset, *args, shuffle=shuffle, **kwargs)

    if shuffle:
        # train means we will compute backward, we use DistributedSampler
        sampler = torch.utils.data.distributed.DistributedSampler(dataset)
        # We ignore shuffle, DistributedSampler already shuffles
        return klass(dataset, *args, **kwargs, sampler=sampler)
    else:
        # We make a manual shard, as DistributedSampler otherwise replicate some examples
        dataset = torch.utils.data.Subset(dataset, list(range(rank(), len(dataset), world_size())))
        return klass(dataset, *args, shuffle=shuffle, **kwargs)
