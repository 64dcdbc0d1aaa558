# Adapted from detectron2 (Apache-2.0): detectron2/utils/comm.py
"""
Small helpers for multi-process training and evaluation: rank/world-size
queries, a barrier, and gather/all_gather of arbitrary picklable objects
(used to collect per-rank matching metrics in validation_epoch_end).
"""

import functools
import logging
import pickle

import numpy as np
import torch
import torch.distributed as dist

logger = logging.getLogger(__name__)

# Process group holding only the ranks on this machine. Set by the launcher
# when it spawns one process per device; None for single-process runs.
_LOCAL_PROCESS_GROUP = None


def _dist_ready() -> bool:
    return dist.is_available() and dist.is_initialized()


def get_world_size() -> int:
    return dist.get_world_size() if _dist_ready() else 1


def get_rank() -> int:
    return dist.get_rank() if _dist_ready() else 0


def get_local_rank() -> int:
    """Rank of this process inside its machine-local group."""
    if not _dist_ready():
        return 0
    assert _LOCAL_PROCESS_GROUP is not None, "launcher did not create the local group"
    return dist.get_rank(group=_LOCAL_PROCESS_GROUP)


def get_local_size() -> int:
    """Number of processes started on this machine."""
    if not _dist_ready():
        return 1
    return dist.get_world_size(group=_LOCAL_PROCESS_GROUP)


def is_main_process() -> bool:
    return get_rank() == 0


def synchronize():
    """Barrier across all ranks; a no-op when not running distributed."""
    if not _dist_ready() or dist.get_world_size() == 1:
        return
    if dist.get_backend() == dist.Backend.NCCL:
        # device_ids is only understood by the NCCL barrier; it silences a warning
        dist.barrier(device_ids=[torch.cuda.current_device()])
    else:
        dist.barrier()


@functools.lru_cache()
def _get_global_gloo_group():
    """A cached gloo group spanning every rank, used to move pickled bytes around."""
    if dist.get_backend() == "nccl":
        return dist.new_group(backend="gloo")
    else:
        return dist.group.WORLD


def _serialize_to_tensor(data, group):
    backend = dist.get_backend(group)
    assert backend in ["gloo", "nccl"]
    device = torch.device("cpu" if backend == "gloo" else "cuda")

    payload = pickle.dumps(data)
    if len(payload) > 1024 ** 3:
        logger.warning("Rank %d is about to gather %.2f GB of pickled data on %s",
                       get_rank(), len(payload) / 1024 ** 3, device)
    storage = torch.ByteStorage.from_buffer(payload)
    return torch.ByteTensor(storage).to(device=device)


def _pad_to_largest_tensor(tensor, group):
    """Exchange byte lengths and zero-pad `tensor` to the largest one.

    Returns the per-rank sizes and the padded tensor (all_gather needs equal shapes).
    """
    world_size = dist.get_world_size(group=group)
    assert world_size >= 1, "gather/all_gather called from a rank outside the group"
    local_size = torch.tensor([tensor.numel()], dtype=torch.int64, device=tensor.device)
    size_list = [torch.zeros([1], dtype=torch.int64, device=tensor.device) for _ in range(world_size)]
    dist.all_gather(size_list, local_size, group=group)
    size_list = [int(size.item()) for size in size_list]

    max_size = max(size_list)
    if local_size != max_size:
        padding = torch.zeros((max_size - local_size,), dtype=torch.uint8, device=tensor.device)
        tensor = torch.cat((tensor, padding), dim=0)
    return size_list, tensor


def _unpickle_all(size_list, tensor_list):
    out = []
    for size, t in zip(size_list, tensor_list):
        out.append(pickle.loads(t.cpu().numpy().tobytes()[:size]))
    return out


def all_gather(data, group=None):
    """Gather any picklable object from every rank; returns the list on all ranks.

    By default the transfer goes through a gloo group so that no device memory is used.
    """
    if get_world_size() == 1:
        return [data]
    if group is None:
        group = _get_global_gloo_group()
    if dist.get_world_size(group) == 1:
        return [data]

    tensor = _serialize_to_tensor(data, group)
    size_list, tensor = _pad_to_largest_tensor(tensor, group)
    max_size = max(size_list)

    tensor_list = [torch.empty((max_size,), dtype=torch.uint8, device=tensor.device) for _ in size_list]
    dist.all_gather(tensor_list, tensor, group=group)
    return _unpickle_all(size_list, tensor_list)


def gather(data, dst=0, group=None):
    """Like all_gather, but only rank `dst` receives the list (others get [])."""
    if get_world_size() == 1:
        return [data]
    if group is None:
        group = _get_global_gloo_group()
    if dist.get_world_size(group=group) == 1:
        return [data]
    rank = dist.get_rank(group=group)

    tensor = _serialize_to_tensor(data, group)
    size_list, tensor = _pad_to_largest_tensor(tensor, group)

    if rank != dst:
        dist.gather(tensor, [], dst=dst, group=group)
        return []
    max_size = max(size_list)
    tensor_list = [torch.empty((max_size,), dtype=torch.uint8, device=tensor.device) for _ in size_list]
    dist.gather(tensor, tensor_list, dst=dst, group=group)
    return _unpickle_all(size_list, tensor_list)


def shared_random_seed():
    """A random int that is identical on every rank (every rank must call this)."""
    ints = np.random.randint(2 ** 31)
    all_ints = all_gather(ints)
    return all_ints[0]


def reduce_dict(input_dict, average=True):
    """Sum (or average) a dict of scalar tensors onto rank 0.

    Keys are sorted so that every rank stacks the values in the same order.
    """
    world_size = get_world_size()
    if world_size < 2:
        return input_dict
    with torch.no_grad():
        names = sorted(input_dict.keys())
        values = torch.stack([input_dict[k] for k in names], dim=0)
        dist.reduce(values, dst=0)
        if dist.get_rank() == 0 and average:
            values /= world_size  # only rank 0 holds the accumulated sum
        return {k: v for k, v in zip(names, values)}


def gather_metrics(metric_dicts, keys):
    """Flatten per-batch metric dicts of this rank and collect them from every rank.

    Used by the lightning module at the end of validation: each rank holds a list of
    dicts (one per batch) with numpy arrays/lists for `keys`.
    """
    local = {k: [v for d in metric_dicts for v in d[k]] for k in keys}
    gathered = all_gather(local)
    merged = {k: [] for k in keys}
    for part in gathered:
        for k in keys:
            merged[k].extend(part[k])
    return merged
