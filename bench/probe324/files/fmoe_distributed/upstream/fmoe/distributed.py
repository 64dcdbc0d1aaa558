r"""
Supportive modules to conduct distributed training
"""
import os
import torch
import torch.nn as nn
import torch.distributed as dist
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors

from .utils import get_torch_default_comm, get_rank_0_in_comm


_groups = None


def _set_groups(**kwargs):
    global _groups
    _groups = kwargs


def _init_moe_comm(data_parallel_size, expert_parallel_size, backend=None):
    r"""
    Build the process groups used by FastMoE. The expert-parallel ("moe") group
    spans `expert_parallel_size` consecutive ranks, the data-parallel group
    spans the ranks that hold identical copies of the experts.
    """
    world_size = dist.get_world_size()
    rank = dist.get_rank()
    assert world_size == data_parallel_size * expert_parallel_size, \
        "world size {} != dp {} x ep {}".format(
            world_size, data_parallel_size, expert_parallel_size)
    if backend is None:
        backend = "nccl"

    moe_group = None
    dp_group = None
    for i in range(data_parallel_size):
        ranks = list(range(i * expert_parallel_size,
                           (i + 1) * expert_parallel_size))
        group = dist.new_group(ranks, backend=backend)
        if rank in ranks:
            moe_group = group
    for j in range(expert_parallel_size):
        ranks = list(range(j, world_size, expert_parallel_size))
        group = dist.new_group(ranks, backend=backend)
        if rank in ranks:
            dp_group = group
    _set_groups(moe=moe_group, dp=dp_group, world=get_torch_default_comm())
    return moe_group, dp_group


def init_distributed(local_rank=None, expert_parallel_size=None):
    r"""
    Initialize torch.distributed from the environment set by
    `torch.distributed.launch` / `torchrun` and pin this process to a GPU.
    """
    if local_rank is None:
        local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl", init_method="env://")
    world_size = dist.get_world_size()
    if expert_parallel_size is None:
        expert_parallel_size = world_size
    return _init_moe_comm(world_size // expert_parallel_size,
                          expert_parallel_size)


class DistributedGroupedDataParallel(nn.Module):
    r"""
    A customized DDP module to support different all-reduce regions in the
    model.  The all-reduce region is defined as an attribution `dp_comm` in the
    weight object.
    The grads of the weights are identified to be reduced in different groups
    according to the weigths' `dp_comm` attribute.
    If it is set to `dp`, it will only be reduced across the data-parallel
    groups, which means that in the model parallel group, they are not
    synchronized.
    If it is set to `world`, the gradients is synchronized across all workers,
    regardless their model or data parallel group. This is extremely useful for
    shared layers like the gate.
    """

    def __init__(
        self,
        module,
        auto_allreduce=False,
        need_sync=True,
        **kwargs
    ):
        assert not auto_allreduce, "Automatic all-reduce is not implemented yet"

        super().__init__()
        self.module = module

        self.comms = dict()
        for k in kwargs:
            if k.endswith('_group'):
                self.comms[k[:-6]] = kwargs[k]
        if _groups is not None:
            for k, v in _groups.items():
                self.comms.setdefault(k, v)
        for k in ['dp', 'gate', 'moe', 'world']:
            if k not in self.comms:
                self.comms[k] = get_torch_default_comm()

        def allreduce_gradients(no_scale=False,
                reduce_after=True, fp32_allreduce=False):
            groups = dict()
            for p in self.module.parameters():
                if not p.requires_grad or p.grad is None:
                    continue
                if hasattr(p, "dp_comm"):
                    dp_comm = p.dp_comm
                else:
                    dp_comm = "dp"
                group_key = (dp_comm, p.dtype)
                if group_key not in groups:
                    groups[group_key] = [p]
                else:
                    groups[group_key].append(p)
            for (dp_comm, dtype), group in groups.items():
                if dp_comm not in self.comms:
                    continue
                comm = self.comms[dp_comm]
                grads = [p.grad.data for p in group]
                coalesced = _flatten_dense_tensors(grads)
                if fp32_allreduce and dtype != torch.float32:
                    coalesced = coalesced.float()
                if not no_scale and not reduce_after:
                    coalesced /= comm.size()
                torch.distributed.all_reduce(coalesced, group=comm)
                torch.cuda.synchronize()
                if not no_scale and reduce_after:
                    coalesced /= comm.size()
                synced = _unflatten_dense_tensors(coalesced, grads)
                for g, s in zip(grads, synced):
                    g.copy_(s)

        self.allreduce_params = allreduce_gradients

        if need_sync:
            self._sync_params()

    def _sync_params(self):
        groups = dict()
        for p in self.module.parameters():
            if not p.requires_grad or p.grad is None:
                continue
            if hasattr(p, "dp_comm"):
                dp_comm = p.dp_comm
            else:
                dp_comm = "dp"
            group_key = (dp_comm, p.dtype)
            if group_key not in groups:
                groups[group_key] = [p]
            else:
                groups[group_key].append(p)
        for (dp_comm, _), group in groups.items():
            if dp_comm not in self.comms:
                continue
            comm = self.comms[dp_comm]
            datas = [p.data for p in group]
            coalesced = _flatten_dense_tensors(datas)
            torch.distributed.broadcast(coalesced,
                    get_rank_0_in_comm(comm), group=comm)
            torch.cuda.synchronize(coalesced.device)
            synced = _unflatten_dense_tensors(coalesced, datas)
            for d, s in zip(datas, synced):
                d.copy_(s)

    def forward(self, *args, **kwargs):
        r"""
        Directly call the module's forward function.
        """
        return self.module(*args, **kwargs)
