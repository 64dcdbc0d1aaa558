# Copyright (c) Microsoft Corporation.
# Licensed under the MIT license.

from typing import TYPE_CHECKING, Any, Optional, Tuple, Union, cast

import os
import re
import time
import logging
import torch
from torch import Tensor
import torch.distributed as dist

from .jit_compiler import tutel_custom_kernel

TUTEL_GROUPING_CACHE = {}
TUTEL_SKIP_A2A = int(os.environ.get('SKIP_A2A', 0)) > 0


def get_world_size(group=None):
    try:
        return dist.get_world_size(group)
    except:
        return 1


def get_world_rank(group=None):
    try:
        return dist.get_rank(group)
    except:
        return 0


def barrier(group=None):
    if get_world_size(group) == 1:
        return
    dist.barrier(group=group)


def create_groups_from_world(group_count, include_init=None):
    backend = TUTEL_GROUPING_CACHE.get('', include_init)
    if include_init:
        assert backend == include_init, "Only 1 backend type is allowed, get: %s v.s. %s" % (backend, include_init)
        TUTEL_GROUPING_CACHE[''] = backend

    if group_count in TUTEL_GROUPING_CACHE:
        return TUTEL_GROUPING_CACHE[group_count]

    try:
        if ('LOCAL_RANK' not in os.environ) and ('OMPI_COMM_WORLD_SIZE' in os.environ):
            if include_init:
                dist.init_process_group(backend=backend,
                    init_method='tcp://%s:%s' % (os.environ['MASTER_ADDR'], os.environ.get('MASTER_PORT', '23456')),
                    rank=int(os.environ['OMPI_COMM_WORLD_RANK']), world_size=int(os.environ['OMPI_COMM_WORLD_SIZE']))
            dist_local_rank = int(os.environ['OMPI_COMM_WORLD_LOCAL_RANK'])
        else:
            if include_init:
                dist.init_process_group(backend=backend)
            dist_local_rank = min(int(os.environ.get('LOCAL_RANK', 0)), torch.cuda.device_count() - 1)
        glob_world_size, glob_world_rank = dist.get_world_size(), dist.get_rank()
        is_distributed = True

        def dist_print(*args):
            if glob_world_rank == 0:
                print(*args)
    except ValueError:
        glob_world_size, glob_world_rank, dist_local_rank = 1, 0, 0
        is_distributed = False
        dist_print = print

    assert glob_world_size % group_count == 0, f"Expected to evenly divide devices into {group_count} groups, while the world size of current sesion is {glob_world_size}."

    dist_group_size = group_count
    dist_world_size = glob_world_size // dist_group_size
    dist_world_rank = glob_world_rank % dist_world_size
    dist_group_rank = glob_world_rank // dist_world_size

    if is_distributed:
        global_group = model_group = data_group = dist.group.WORLD

        if dist_group_size != glob_world_size:
            groups, inner_ranks = [], []
            for gr in range(dist_group_size):
                group_ranks = [x for x in range(gr * dist_world_size, (gr + 1) * dist_world_size)]
                groups += [dist.new_group(ranks=group_ranks)]
                inner_ranks += [group_ranks]
            model_group = groups[dist_group_rank]

        if dist_world_size != glob_world_size:
            groups, outer_ranks = [], []
            for gr in range(dist_world_size):
                group_ranks = [x for x in range(gr, dist_world_size * dist_group_size, dist_world_size)]
                groups += [dist.new_group(ranks=group_ranks)]
                outer_ranks += [group_ranks]
            data_group = groups[dist_world_rank]
    else:
        model_group, data_group, global_group = None, None, None

    class ParallelPropStorage:
        pass

    result = ParallelPropStorage()

    result.global_size = glob_world_size
    result.global_rank = glob_world_rank

    result.group_count = dist_group_size
    result.data_rank = dist_group_rank

    result.model_size = dist_world_size
    result.model_rank = dist_world_rank

    if backend == 'nccl':
        result.local_device = torch.device('cuda', dist_local_rank)
        torch.cuda.set_device(result.local_device)
    elif backend == 'gloo':
        result.local_device = torch.device('cpu')
    elif backend is None:
        result.local_device = None
    else:
        raise Exception('Unsupported backend type: %s' % backend)

    result.data_group = data_group
    result.model_group = model_group
    result.global_group = global_group

    result.is_distributed = is_distributed
    result.dist_print = dist_print

    TUTEL_GROUPING_CACHE[group_count] = result
    return result


def swap_axis(t, x, y):
    return t if x == y else t.swapaxes(x, y)


def simple_all_reduce(input, group=None, op=torch.distributed.ReduceOp.SUM, inplace=False):
    world_size = get_world_size(group)
    if world_size == 1:
        return input
    output = input if inplace else torch.clone(input, memory_format=torch.contiguous_format)
    dist.all_reduce(output, op=op, group=group)
    return output


def simple_all_to_all(input, group=None, background=False):
    world_size = get_world_size(group)
    if world_size == 1:
        return input
    input = input.contiguous()
    output = torch.empty_like(input)
    if background:
        future_op = dist.all_to_all_single(output, input, group=group, async_op=True)
        return output, future_op
    else:
        dist.all_to_all_single(output, input, group=group)
        return output


class AllToAllStatus:
    initialized = False
    num_split = 0
    split_dim = 0
    max_num_split = int(os.environ.get('TUTEL_MAX_A2A_SPLIT', 8))

    @staticmethod
    def init(group: dist.ProcessGroup, num_split: int, split_dim: int) -> None:
        world_size = get_world_size(group)
        if world_size <= 1:
            return

        AllToAllStatus.num_split = num_split
        AllToAllStatus.split_dim = split_dim

        # Initialize NCCL
        if not AllToAllStatus.initialized:
            world_rank = get_world_rank(group)
            nccl_unique_id_size = tutel_custom_kernel.get_nccl_unique_id_size()
            nccl_unique_id = torch.zeros([nccl_unique_id_size], dtype=torch.int8).cpu()
            if world_rank == 0:
                tutel_custom_kernel.get_nccl_unique_id(nccl_unique_id)
            nccl_unique_id = nccl_unique_id.cuda()
            dist.broadcast(nccl_unique_id, 0, group)
            tutel_custom_kernel.init_nccl(
                nccl_unique_id.cpu(),
                world_size,
                world_rank,
                AllToAllStatus.max_num_split)
            AllToAllStatus.initialized = True


def all_to_all_2dh(input, group=None):
    """Two-level (intra-node NVLink, then inter-node IB) all-to-all, exposed by
    the custom NCCL bindings in tutel_custom_kernel."""
    world_size = get_world_size(group)
    if world_size == 1:
        return input
    AllToAllStatus.init(group, 1, -1)
    local_size = int(os.environ.get('LOCAL_SIZE', torch.cuda.device_count()))
    return tutel_custom_kernel.nccl_all_to_all_2d(input.contiguous(), local_size)


class AllToAll(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, input: Tensor, group=None, use_2dh=False):
        ctx.group, ctx.use_2dh = group, use_2dh
        if TUTEL_SKIP_A2A:
            return input
        if use_2dh:
            return all_to_all_2dh(input, group=group)
        return simple_all_to_all(input, group=group)

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor):
        if TUTEL_SKIP_A2A:
            return grad_output, None, None
        if ctx.use_2dh:
            return all_to_all_2dh(grad_output, group=ctx.group), None, None
        return simple_all_to_all(grad_output, group=ctx.group), None, None


def all_to_all(input, input_split_dim, output_split_dim, use_2dh=False, group=None):
    world_size = get_world_size(group)
    if world_size == 1:
        return input
    input = swap_axis(input, 0, input_split_dim).contiguous()
    output = AllToAll.apply(input, group, use_2dh)
    output = output.view([world_size, -1] + list(output.shape[1:]))
    output = output.permute([1] + list(range(2, output.dim()))[:input_split_dim] + [0] + list(range(2, output.dim()))[input_split_dim:])
    output = output.reshape(list(output.shape[:output_split_dim]) + [-1] + list(output.shape[output_split_dim + 2:]))
    return output


_comm_stream = None


def get_comm_stream():
    global _comm_stream
    if _comm_stream is None:
        _comm_stream = torch.cuda.Stream()
    return _comm_stream


def overlapped_all_to_all(chunks, group=None):
    """Issue one all-to-all per chunk on a side stream so that the expert FFN of
    chunk i can run while chunk i+1 is still in flight."""
    comm_stream = get_comm_stream()
    compute_stream = torch.cuda.current_stream()
    outputs = []
    for chunk in chunks:
        comm_stream.wait_stream(compute_stream)
        with torch.cuda.stream(comm_stream):
            out = simple_all_to_all(chunk, group=group)
        out.record_stream(compute_stream)
        outputs.append(out)
    compute_stream.wait_stream(comm_stream)
    return outputs
