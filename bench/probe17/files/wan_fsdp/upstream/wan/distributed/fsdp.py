# Copyright 2024-2025 The Alibaba Wan Team Authors. All rights reserved.
import gc
from functools import partial

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import MixedPrecision, ShardingStrategy
from torch.distributed.fsdp.wrap import lambda_auto_wrap_policy
from torch.distributed.utils import _free_storage


def shard_model(
    model,
    device_id,
    param_dtype=torch.bfloat16,
    reduce_dtype=torch.float32,
    buffer_dtype=torch.float32,
    process_group=None,
    sharding_strategy=ShardingStrategy.FULL_SHARD,
    sync_module_states=True,
):
    """Wrap every transformer block of `model` in its own FSDP unit.

    `device_id` is the local GPU index; FSDP moves each unit to that device while wrapping.
    """
    model = FSDP(
        module=model,
        process_group=process_group,
        sharding_strategy=sharding_strategy,
        auto_wrap_policy=partial(lambda_auto_wrap_policy, lambda_fn=lambda m: m in model.blocks),
        mixed_precision=MixedPrecision(
            param_dtype=param_dtype,
            reduce_dtype=reduce_dtype,
            buffer_dtype=buffer_dtype,
        ),
        device_id=device_id,
        sync_module_states=sync_module_states,
    )
    return model


def shard_model_on_current_device(model, **kwargs):
    """Convenience wrapper used by the training scripts (one process per GPU)."""
    return shard_model(model, device_id=torch.cuda.current_device(), **kwargs)


def free_model(model):
    for m in model.modules():
        if isinstance(m, FSDP):
            _free_storage(m._handle.flat_param.data)
    del model
    gc.collect()
    torch.cuda.empty_cache()


def gather_full_state_dict(model, rank):
    """Gather a full (unsharded) state dict on rank 0, offloaded to CPU."""
    from torch.distributed.fsdp import FullStateDictConfig, StateDictType

    cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, cfg):
        state = model.state_dict()
    if rank == 0:
        return {k: v.cpu() for k, v in state.items()}
    return None


def report_memory(tag=""):
    """Print the allocator state of the current GPU (rank 0 only)."""
    if not dist.is_initialized() or dist.get_rank() == 0:
        free, total = torch.cuda.mem_get_info()
        allocated = torch.cuda.memory_allocated() / 2**30
        reserved = torch.cuda.memory_reserved() / 2**30
        print(f"[{tag}] allocated={allocated:.2f}G reserved={reserved:.2f}G "
              f"free={free / 2**30:.2f}G total={total / 2**30:.2f}G")


def broadcast_model_params(model, src=0):
    """Make sure every rank starts from identical weights before FSDP wrapping."""
    for p in model.parameters():
        dist.broadcast(p.data, src=src)
    for b in model.buffers():
        dist.broadcast(b.data, src=src)


def count_fsdp_units(model):
    return sum(1 for m in model.modules() if isinstance(m, FSDP))
