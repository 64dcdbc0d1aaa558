r"""
Utils to play with PyTorch.
"""
import os
import torch
import torch.distributed as dist


# pylint: disable=broad-except
# pylint: disable=protected-access
def get_torch_default_comm():
    r"""
    The NCCL communicator is needed so that Fast MoE can perform customized
    communication operators in the C code. However, it is not a publicly
    available variable. Therefore, a hacking class of the `ProcessGroupNCCL`
    in Fast MoE's C code takes the `_default_pg` and tries to dig the
    communicator out from the object. As PyTorch's private interface varies from
    time to time, different hacking techniques are tried one-by-one to be
    compatible with various versions of PyTorch.
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


def get_rank_0_in_comm(comm):
    world_size = dist.get_world_size(comm)
    x = torch.tensor([dist.get_rank()], dtype=torch.int64, device='cuda')
    ys = [torch.empty_like(x) for _ in range(world_size)]
    dist.all_gather(ys, x, group=comm)
    root_rank = ys[0].item()
    return root_rank


def check_nccl_backend(group=None):
    r"""
    FastMoE's customized all-to-all only works on top of NCCL groups, so refuse
    to run with gloo / mpi process groups early instead of failing deep inside
    the C++ extension.
    """
    backend = dist.get_backend(group)
    if backend != dist.Backend.NCCL:
        raise RuntimeError(
            "FastMoE requires the NCCL backend, got {}".format(backend))
    return backend


def switch_from_env(key, default=False):
    r"""
    Read a 0/1 switch from the environment, e.g. FMOE_FASTER_SCHEDULE_ENABLE.
    """
    value = os.environ.get(key)
    if value is None:
        return default
    return value.lower() in ("1", "true", "yes", "on")


def get_device_count_cuda():
    # historical name: counts devices visible through CUDA_VISIBLE_DEVICES
    return torch.cuda.device_count()


def count_parameters(module, only_trainable=True):
    total = 0
    for p in module.parameters():
        if only_trainable and not p.requires_grad:
            continue
        total += p.numel()
    return total


def gpu_memory_stats(device=None):
    r"""
    Return a small dict of the caching allocator's statistics (in MiB); used by
    the benchmark scripts to print memory after each iteration.
    """
    mib = 1024 * 1024
    return {
        "allocated": torch.cuda.memory_allocated(device) / mib,
        "max_allocated": torch.cuda.max_memory_allocated(device) / mib,
        "reserved": torch.cuda.memory_reserved(device) / mib,
    }
