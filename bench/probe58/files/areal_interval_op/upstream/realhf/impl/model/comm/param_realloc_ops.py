# Copyright 2025 Ant Group Inc.
# Licensed under the Apache License, Version 2.0 (the "License").
"""
Helpers for re-allocating model parameters between the training layout (ZeRO/TP shards of the
actor) and the generation layout (TP shards of the rollout engine). Parameters are flattened into
one contiguous buffer per model; a "reallocation plan" is a list of (start, end) intervals to copy.
"""

import dataclasses
import functools
import itertools
from typing import Dict, List, Optional, Tuple

import numpy as np
import torch
import torch.distributed as dist

from realhf.base import constants, logging

logger = logging.getLogger("param_realloc_ops")

try:
    from realhf._C.interval_op import merge_intervals, slice_intervals  # CPU implementation (always built)
except ImportError:
    merge_intervals = slice_intervals = None
    logger.warning("realhf._C.interval_op is not built; falling back to the python interval ops")

from realhf._C.interval_op_cuda import (
    set_intervals_cuda,
    slice_intervals_cuda,
    slice_intervals_cuda_batched,
)


@dataclasses.dataclass
class ReallocPlan:
    src_rank: int
    dst_ranks: List[int]
    intervals: np.ndarray  # (n, 2) int64, [start, end)
    numel: int

    @property
    def total(self) -> int:
        return int((self.intervals[:, 1] - self.intervals[:, 0]).sum())


def _py_slice_intervals(src: torch.Tensor, intervals: np.ndarray) -> torch.Tensor:
    return torch.cat([src[int(s) : int(e)] for s, e in intervals])


def _py_set_intervals(src: torch.Tensor, dst: torch.Tensor, intervals: np.ndarray):
    offset = 0
    for s, e in intervals:
        n = int(e - s)
        dst[int(s) : int(e)] = src[offset : offset + n]
        offset += n


def _to_device_intervals(intervals: np.ndarray, device: torch.device) -> torch.Tensor:
    return torch.from_numpy(intervals.astype(np.int64)).to(device=device, non_blocking=True)


def slice_flat_param(src: torch.Tensor, intervals: np.ndarray, max_interval_size: int) -> torch.Tensor:
    """Gather the elements covered by `intervals` from a flat parameter buffer."""
    if src.is_cuda:
        intervals_t = _to_device_intervals(intervals, src.device)
        return slice_intervals_cuda(src, intervals_t, int((intervals[:, 1] - intervals[:, 0]).sum()), max_interval_size)
    if slice_intervals is not None:
        return slice_intervals(src, intervals)
    return _py_slice_intervals(src, intervals)


def set_flat_param(src: torch.Tensor, dst: torch.Tensor, intervals: np.ndarray, max_interval_size: int):
    """Scatter `src` into the positions of `dst` described by `intervals` (inverse of slice)."""
    if dst.is_cuda:
        intervals_t = _to_device_intervals(intervals, dst.device)
        set_intervals_cuda(src, dst, intervals_t, max_interval_size)
        return
    _py_set_intervals(src, dst, intervals)


def batched_slice(srcs: List[torch.Tensor], plans: List[ReallocPlan]) -> List[torch.Tensor]:
    """Slice many flat buffers with one kernel launch (used when a layer is split into many shards)."""
    assert len(srcs) == len(plans)
    if len(srcs) == 0:
        return []
    device = srcs[0].device
    interval_tensors = [_to_device_intervals(p.intervals, device) for p in plans]
    sizes = [p.total for p in plans]
    return slice_intervals_cuda_batched(srcs, interval_tensors, sizes)


@functools.lru_cache(maxsize=64)
def _comm_group(ranks: Tuple[int, ...]) -> Optional[dist.ProcessGroup]:
    if len(ranks) <= 1:
        return None
    return dist.new_group(list(ranks), backend="nccl")


def realloc_flat_params(
    src_flat: Optional[torch.Tensor],
    dst_flat: Optional[torch.Tensor],
    plans: List[ReallocPlan],
    max_interval_size: int = 1024 * 1024,
):
    """Execute a reallocation plan: every src rank slices its intervals and broadcasts them to the dst ranks."""
    my_rank = dist.get_rank()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for plan in plans:
            group = _comm_group(tuple(sorted({plan.src_rank, *plan.dst_ranks})))
            if my_rank == plan.src_rank:
                buf = slice_flat_param(src_flat, plan.intervals, max_interval_size)
            elif my_rank in plan.dst_ranks:
                buf = torch.empty(plan.total, dtype=dst_flat.dtype, device="cuda")
            else:
                continue
            if group is not None:
                dist.broadcast(buf, src=plan.src_rank, group=group)
            if my_rank in plan.dst_ranks:
                set_flat_param(buf, dst_flat, plan.intervals, max_interval_size)
    torch.cuda.current_stream().wait_stream(stream)
    stream.synchronize()


def build_plans(src_shards: Dict[int, np.ndarray], dst_shards: Dict[int, np.ndarray]) -> List[ReallocPlan]:
    """Intersect source shard ranges with destination shard ranges (both given as (start, end) per rank)."""
    plans = []
    for src_rank, (s0, s1) in src_shards.items():
        dst_ranks, intervals = [], []
        for dst_rank, (d0, d1) in dst_shards.items():
            lo, hi = max(s0, d0), min(s1, d1)
            if lo < hi:
                dst_ranks.append(dst_rank)
                intervals.append((lo, hi))
        if dst_ranks:
            iv = np.array(sorted(set(intervals)), dtype=np.int64)
            plans.append(ReallocPlan(src_rank, dst_ranks, iv, int(s1 - s0)))
    return plans


def flatten_params(params: List[torch.Tensor]) -> torch.Tensor:
    numel = sum(p.numel() for p in params)
    flat = torch.empty(numel, dtype=params[0].dtype, device=params[0].device)
    offset = 0
    for p in params:
        n = p.numel()
        flat[offset : offset + n].copy_(p.view(-1))
        offset += n
    return flat


def param_intervals_of_model(named_shapes: List[Tuple[str, Tuple[int, ...]]]) -> Dict[str, Tuple[int, int]]:
    out, offset = {}, 0
    for name, shape in named_shapes:
        n = int(np.prod(shape)) if len(shape) else 1
        out[name] = (offset, offset + n)
        offset += n
    return out


def _debug_check(src: torch.Tensor, intervals: np.ndarray, max_interval_size: int):
    ref = _py_slice_intervals(src.cpu(), intervals)
    got = slice_flat_param(src, intervals, max_interval_size).cpu()
    assert torch.equal(ref, got), "interval slicing mismatch"
    logger.info("interval op check passed for %d intervals (world=%d, pp=%d)", len(intervals), dist.get_world_size(), constants.pipe_parallel_world_size())


def _chunks(it, n):
    it = iter(it)
    while True:
        chunk = list(itertools.islice(it, n))
        if not chunk:
            return
        yield chunk
