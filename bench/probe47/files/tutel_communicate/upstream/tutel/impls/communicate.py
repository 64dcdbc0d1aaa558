# Copyright (c) Microsoft Corporation.
# Licensed under the MIT license.

import os
import re

import torch
import torch.distributed as dist
from torch import Tensor

try:
    import tutel_custom_kernel
except ImportError:
    tutel_custom_kernel = None

TUTEL_GROUPING_CACHE = {}
TUTEL_SKIP_A2A = int(os.environ.get("SKIP_A2A", 0)) > 0


def get_world_size(group=None):
    try:
        return dist.get_world_size(group)
    except Exception:
        return 1


def get_world_rank(group=None):
    try:
        return dist.get_rank(group)
    except Exception:
        return 0


def create_groups_from_world(group_count, include_init=None):
    backend = TUTEL_GROUPING_CACHE.get("", include_init)
    if include_init:
        assert backend == include_init, "Only 1 backend type is allowed, get: %s v.s. %s" % (backend, include_init)
        TUTEL_GROUPING_CACHE[""] = backend

    if group_count in TUTEL_GROUPING_CACHE:
        return TUTEL_GROUPING_CACHE[group_count]

    try:
        if ("LOCAL_RANK" not in os.environ) and ("OMPI_COMM_WORLD_SIZE" in os.environ):
            if include_init:
                dist.init_process_group(
                    backend=backend,
                    init_method="tcp://%s:%s" % (os.environ["MASTER_ADDR"], os.environ.get("MASTER_PORT", "23456")),
                    rank=int(os.environ["OMPI_COMM_WORLD_RANK"]),
                    world_size=int(os.environ["OMPI_COMM_WORLD_SIZE"]),
                )
            dist_local_rank = int(os.environ["OMPI_COMM_WORLD_LOCAL_RANK"])
        else:
            if include_init:
                dist.init_process_group(backend=backend)
            dist_local_rank = min(int(os.environ.get("LOCAL_RANK", 0)), torch.cuda.device_count() - 1)
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

    if backend == "nccl":
        result.local_device = torch.device("cuda", dist_local_rank)
        torch.cuda.set_device(result.local_device)
    elif backend == "gloo":
        result.local_device = torch.device("cpu")
    elif backend is None:
        result.local_device = None
    else:
        raise Exception("Unsupported backend type: %s" % backend)

    result.data_group = data_group
    result.model_group = model_group
    result.global_group = global_group

    result.is_distributed = is_distributed
    result.dist_print = dist_print

    TUTEL_GROUPING_CACHE[group_count] = result
    return result


def get_default_group():
    return None


class AllToAllStatus:
    initialized = False
    num_split = 0
    split_dim = 0

    @staticmethod
    def init(group: dist.ProcessGroup, num_split: int, split_dim: int) -> None:
        AllToAllStatus.num_split = num_split
        AllToAllStatus.split_dim = split_dim

        # Initialize NCCL
        if not AllToAllStatus.initialized:
            world_size = get_world_size(group)
            if world_size <= 1:
                return
            AllToAllStatus.initialized = True
            world_rank = get_world_rank(group)
            nccl_unique_id_size = tutel_custom_kernel.get_nccl_unique_id_size()
            nccl_unique_id = torch.zeros([nccl_unique_id_size], dtype=torch.int8).cpu()
            if world_rank == 0:
                tutel_custom_kernel.get_nccl_unique_id(nccl_unique_id)
            nccl_unique_id = nccl_unique_id.cuda()
            dist.broadcast(nccl_unique_id, 0, group)
            tutel_custom_kernel.init_nccl(nccl_unique_id.cpu(), world_size, world_rank, AllToAllStatus.max_num_split)


class AllToAll(torch.autograd.Function):

    @staticmethod
    def forward(ctx: any, group: dist.ProcessGroup, input: Tensor):
        if TUTEL_SKIP_A2A:
            return input
        ctx.group = group
        world_size = get_world_size(group)
        if world_size <= 1:
            return input
        input = input.contiguous()
        output = torch.empty_like(input)
        dist.all_to_all_single(output, input, group=group)
        return output

    @staticmethod
    def backward(ctx: any, grad_output: Tensor):
        if TUTEL_SKIP_A2A:
            return (None, grad_output)
        return (None, AllToAll.apply(ctx.group, grad_output))


class AllToAll2DAsync(torch.autograd.Function):
    """Two-dimensional hierarchical all-to-all on NCCL (intra-node first, then inter-node)."""

    @staticmethod
    def forward(ctx: any, input: Tensor):
        if TUTEL_SKIP_A2A:
            return input
        return tutel_custom_kernel.nccl_all_to_all_2d_async(input.contiguous())

    @staticmethod
    def backward(ctx: any, grad_output: Tensor):
        if TUTEL_SKIP_A2A:
            return grad_output
        return tutel_custom_kernel.nccl_all_to_all_2d_async(grad_output.contiguous())


class PreAllreduceSum(torch.autograd.Function):

    @staticmethod
    def forward(ctx, group, input):
        ctx.group = group
        ctx.num_nodes = get_world_size(ctx.group)
        if ctx.num_nodes <= 1:
            return input
        ctx.input_shape = input.shape
        output = torch.empty([ctx.num_nodes, input.numel()], device=input.device, dtype=input.dtype)
        tensor_list = [x.contiguous() for x in torch.chunk(output, chunks=ctx.num_nodes, dim=0)]
        dist.all_gather(tensor_list=tensor_list, tensor=input.contiguous(), group=ctx.group)
        output = output.view(list(input.shape[:0]) + [input.shape[0] * ctx.num_nodes] + list(input.shape[1:]))
        return output

    @staticmethod
    def backward(ctx, doutput):
        if get_world_size(ctx.group) <= 1:
            return (None, doutput)
        dinput = torch.empty(ctx.input_shape, device=doutput.device, dtype=doutput.dtype)
        chunks = [x.contiguous() for x in torch.chunk(doutput.view(ctx.num_nodes, -1), chunks=ctx.num_nodes, dim=0)]
        dist.reduce_scatter(output=dinput, input_list=chunks, group=ctx.group)
        return (None, dinput)


def all_to_all(input, concat_dim, split_dim, use_2dh=False, group=None):
    if use_2dh:
        reshaped = input.transpose(0, split_dim).contiguous() if split_dim != 0 else input
        output = AllToAll2DAsync.apply(reshaped)
    else:
        reshaped = input.transpose(0, split_dim).contiguous() if split_dim != 0 else input
        output = AllToAll.apply(group, reshaped)
    world_size = get_world_size(group)
    if concat_dim != 0:
        output = output.view([world_size, -1] + list(output.shape[1:]))
        output = output.transpose(0, concat_dim + 1).contiguous()
        output = output.view(list(output.shape[:concat_dim]) + [-1] + list(output.shape[concat_dim + 2:]))
    return output


def simple_all_reduce(input, group=None, op=torch.distributed.ReduceOp.SUM):
    world_size = get_world_size(group)
    if world_size == 1:
        return input
    output = torch.clone(input, memory_format=torch.contiguous_format)
    dist.all_reduce(output, op=op, group=group)
    return output


def a2a_ffn_overlap_forward(input, expert_fn, a2a_ffn_overlap_degree, use_2dh, group):
    """Pipelines `a2a_ffn_overlap_degree` chunks: the all-to-all of chunk i+1 runs on
    a side stream while the experts compute chunk i."""
    split_dim = 1
    assert a2a_ffn_overlap_degree <= AllToAllStatus.max_num_split, "Excepting a2a_ffn_overlap_degree (%d) <= AllToAllStatus.max_num_split (%d)." % (a2a_ffn_overlap_degree, AllToAllStatus.max_num_split)
    assert input.shape[split_dim] % a2a_ffn_overlap_degree == 0, "Excepting input.shape[%d] (%d) be a multiple of a2a_ffn_overlap_degree (%d)." % (split_dim, input.shape[split_dim], a2a_ffn_overlap_degree)
    AllToAllStatus.init(group, a2a_ffn_overlap_degree, split_dim)

    comm_stream = torch.cuda.Stream()
    compute_stream = torch.cuda.current_stream()
    chunks = input.chunk(a2a_ffn_overlap_degree, dim=split_dim)

    received = [None] * a2a_ffn_overlap_degree
    events = [torch.cuda.Event() for _ in range(a2a_ffn_overlap_degree)]
    for i, chunk in enumerate(chunks):
        comm_stream.wait_stream(compute_stream)
        with torch.cuda.stream(comm_stream):  # dispatch
            received[i] = all_to_all(chunk, 1, 0, use_2dh=use_2dh, group=group)
            events[i].record(comm_stream)

    outputs = []
    for i in range(a2a_ffn_overlap_degree):
        compute_stream.wait_event(events[i])
        received[i].record_stream(compute_stream)
        outputs.append(expert_fn(received[i]))

    combined = []
    for i, y in enumerate(outputs):
        comm_stream.wait_stream(compute_stream)
        with torch.cuda.stream(comm_stream):  # combine
            combined.append(all_to_all(y, 0, 1, use_2dh=use_2dh, group=group))
    compute_stream.wait_stream(comm_stream)
    return torch.cat(combined, dim=split_dim)


AllToAllStatus.max_num_split = int(os.environ.get("TUTEL_MAX_NUM_SPLIT", 8))
