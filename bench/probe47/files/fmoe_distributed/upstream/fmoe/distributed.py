r"""
Supportive modules to conduct distributed training with FastMoE:
process-group discovery, FastMoE's NCCL communicator binding, and a grouped
data-parallel wrapper that all-reduces each parameter only inside the group
that actually replicates it (world / data-parallel / model-parallel / none for
experts).
"""
import os
import warnings

import torch
import torch.distributed as dist
import torch.nn as nn
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors

# Groups that FastMoE knows about; filled by `set_parallel_groups`.
_groups = {}


def get_torch_default_comm():
    """Return the default process group.

    FastMoE's C++ side digs the raw communicator out of this object, and the
    private attribute holding it has moved between torch releases, so try
    the known spellings in turn.
    """
    try:
        comm = dist.distributed_c10d._get_default_group()
        return comm
    except Exception as _:
        pass
    try:
        comm = dist.distributed_c10d._default_pg
        if comm is not None:
            return comm
    except Exception as _:
        pass
    raise RuntimeError("Unsupported PyTorch version")


def get_nccl_backend(comm):
    """torch >= 2.0 wraps the backend in a ProcessGroup; FastMoE's C++ side wants
    the ProcessGroupNCCL object itself."""
    if hasattr(comm, "_get_backend"):
        return comm._get_backend(torch.device("cuda"))
    return comm


def check_backend(comm=None):
    comm = comm or get_torch_default_comm()
    backend = dist.get_backend(comm)
    if backend != "nccl":
        raise RuntimeError(f"FastMoE's global scatter/gather needs the NCCL backend, got {backend!r}")
    return get_nccl_backend(comm)


def set_parallel_groups(data_group=None, model_group=None, moe_group=None):
    _groups["dp"] = data_group
    _groups["mp"] = model_group
    _groups["moe"] = moe_group


def create_moe_groups(num_expert_parallel):
    """Split the world into expert-parallel groups of `num_expert_parallel` ranks;
    ranks holding the same experts form the matching data-parallel groups."""
    world_size, rank = dist.get_world_size(), dist.get_rank()
    assert world_size % num_expert_parallel == 0
    moe_group, dp_group = None, None
    for start in range(0, world_size, num_expert_parallel):
        ranks = list(range(start, start + num_expert_parallel))
        group = dist.new_group(ranks=ranks, backend="nccl")
        if rank in ranks:
            moe_group = group
    for offset in range(num_expert_parallel):
        ranks = list(range(offset, world_size, num_expert_parallel))
        group = dist.new_group(ranks=ranks)
        if rank in ranks:
            dp_group = group
    set_parallel_groups(data_group=dp_group, moe_group=moe_group)
    return moe_group, dp_group


class DistributedGroupedDataParallel(nn.Module):
    """Data-parallel wrapper with per-parameter reduction groups.

    Each parameter may carry a `dp_comm` attribute naming the group its
    gradient is averaged over: "dp" (default: data-parallel replicas only),
    "world" (everyone, e.g. the gate), "moe", or any extra `<name>_group`
    passed as a keyword. Expert weights normally use "none" and are skipped.
    """

    def __init__(self, module, auto_allreduce=False, need_sync=True, **kwargs):
        assert not auto_allreduce, "Automatic all-reduce is not implemented yet"

        super().__init__()
        self.module = module

        self.comms = dict()
        for k in kwargs:
            if k.endswith("_group"):
                self.comms[k[:-6]] = kwargs[k]
        for k in ["dp", "gate", "moe", "world"]:
            if k not in self.comms:
                self.comms[k] = _groups.get(k) or get_torch_default_comm()

        def allreduce_gradients(no_scale=False, reduce_after=True, fp32_allreduce=False):
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
            torch.distributed.broadcast(coalesced, 0, group=comm)
            torch.cuda.synchronize()  # params must land before they are unflattened
            synced = _unflatten_dense_tensors(coalesced, datas)
            for d, s in zip(datas, synced):
                d.copy_(s)

    def forward(self, *args, **kwargs):
        r"""
        Directly call the module's forward function.
        """
        return self.module(*args, **kwargs)


def init_from_env():
    """Initialise torch.distributed from the launcher's environment and bind
    this process to its GPU."""
    if "OMPI_COMM_WORLD_RANK" in os.environ:
        os.environ.setdefault("RANK", os.environ["OMPI_COMM_WORLD_RANK"])
        os.environ.setdefault("WORLD_SIZE", os.environ["OMPI_COMM_WORLD_SIZE"])
        os.environ.setdefault("LOCAL_RANK", os.environ["OMPI_COMM_WORLD_LOCAL_RANK"])
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    if dist.get_rank() == 0 and not dist.is_nccl_available():
        warnings.warn("NCCL is not available in this torch build")
    return local_rank
