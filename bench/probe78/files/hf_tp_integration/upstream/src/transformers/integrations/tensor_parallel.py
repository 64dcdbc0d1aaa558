# Copyright 2024 The HuggingFace Team. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
from __future__ import annotations

import os
import re
from functools import lru_cache, partial
from typing import Dict, List, Optional, Tuple, Union

import torch
from torch import nn

from ..utils import is_torch_greater_or_equal, logging

logger = logging.get_logger(__name__)

_torch_distributed_available = torch.distributed.is_available()

if is_torch_greater_or_equal("2.5") and _torch_distributed_available:
    from torch.distributed.tensor import DTensor, Placement, Replicate, Shard
    from torch.distributed.tensor.parallel import (
        ColwiseParallel,
        ParallelStyle,
        PrepareModuleInput,
        RowwiseParallel,
        SequenceParallel,
        parallelize_module,
    )


def initialize_tensor_parallelism(tp_plan, tp_size=None):
    r"""
    Sets up the device mesh and initializes the backend for tensor parallelism.
    This function is called when the model is loaded and the TP plan is set to 'auto'.
    """
    if tp_plan is None:
        return None, None, None

    if not is_torch_greater_or_equal("2.5"):
        raise EnvironmentError("Tensor parallel is only supported for `torch>=2.5`.")

    # Detect the accelerator on the machine. If no accelerator is available, it returns CPU.
    device_type = torch._C._get_accelerator().type
    current_device = getattr(torch, device_type)
    if not torch.distributed.is_initialized():
        try:
            rank = int(os.environ["RANK"])
            local_rank = int(os.environ["LOCAL_RANK"])
            world_size = int(os.environ["WORLD_SIZE"])

            backend_map = {"cuda": "nccl", "cpu": "gloo", "xpu": "ccl", "hpu": "hccl"}
            backend = backend_map[device_type]
            if device_type == "cpu" and int(os.environ.get("CCL_WORKER_COUNT", 0)):
                backend = "ccl"

            torch.distributed.init_process_group(backend=backend, rank=rank, world_size=world_size)
            if device_type != "cpu":
                current_device.set_device(local_rank)

        except Exception as e:
            raise EnvironmentError(
                "We tried to initialize torch.distributed for you, but it failed. Make "
                "sure you init torch distributed in your script to use `tp_plan='auto'`."
            ) from e

    index = current_device.current_device() if device_type != "cpu" else None
    tp_device = torch.device(device_type, index)

    # Silence output for non-primary ranks
    if index is not None and index > 0:
        import sys

        sys.stdout = open(os.devnull, "w")
        sys.stderr = open(os.devnull, "w")

    device_map = tp_device
    tp_size = tp_size if tp_size is not None else torch.distributed.get_world_size()
    device_mesh = torch.distributed.init_device_mesh(tp_device.type, (tp_size,))
    return tp_device, device_map, device_mesh


def _blocks_to_block_sizes(total_size: int, blocks: Union[int, List[int]]) -> List[int]:
    """
    Convert block count or proportions to block sizes.
    """
    if isinstance(blocks, list):
        total_blocks = sum(blocks)
        assert total_size % total_blocks == 0, f"Cannot split {total_size} in proportional blocks: {blocks}"
        part_size = total_size // total_blocks
        return [part_size * block for block in blocks]
    else:
        assert total_size % blocks == 0, f"Prepacked is not divisible by {blocks}"
        single_size = total_size // blocks
        return [single_size] * blocks


def get_packed_weights(param, empty_param, device_mesh, rank, dim):
    """
    When weights are packed (gate_up_proj), we need to make sure each shard gets its correct share.
    So if you have: gate_proj       ( 16, 5120, 8190)
    and             up_proj         ( 16, 5120, 8190)
    packed as       gate_up_proj    ( 16, 5120, 2 * 8190)
    And you shard along the last dimension, you need to interleave the gate and up values.
    """
    slice_ = param
    total_size = empty_param.shape[dim]
    world_size = device_mesh.size()
    block_sizes = _blocks_to_block_sizes(total_size=total_size, blocks=2)

    tensors_slices = []
    block_offset = 0
    for block_size in block_sizes:
        shard_block_size = block_size // world_size
        start = rank * shard_block_size
        stop = (rank + 1) * shard_block_size
        tensors_slices += range(block_offset + start, block_offset + stop)
        block_offset += block_size

    if dim == 0:
        tensor = slice_[tensors_slices, ...]
    elif dim == 1 or dim == -2:
        tensor = slice_[:, tensors_slices, ...]
    elif dim == 2 or dim == -1:
        tensor = slice_[..., tensors_slices]
    else:
        raise ValueError(f"Unsupported dim {dim}, only dim 0, 1 or 2 are supported")
    return tensor


def translate_to_torch_parallel_style(style: str):
    """
    In model configurations, we use a neutral type (string) to specify parallel
    styles, here we translate them into torch.distributed tensor-parallel
    types.
    """
    if not isinstance(style, str):
        raise ValueError(f"Unsupported parallel style type {type(style)}, expected str")

    if style == "colwise":
        return ColwiseParallel()
    elif style == "rowwise":
        return RowwiseParallel()
    elif style == "colwise_rep":
        return ColwiseParallel(output_layouts=Replicate())
    elif style == "rowwise_rep":
        return RowwiseParallel(input_layouts=Replicate())
    elif style == "sequence_parallel":
        return SequenceParallel()
    else:
        raise ValueError(f"Unsupported parallel style value: {style}")


@lru_cache
def _get_parameter_tp_plan(parameter_name: str, tp_plan: Tuple[Tuple[str, str], ...]) -> Optional[str]:
    """
    Get the TP style for a parameter from the TP plan.

    The TP plan is a dictionary that maps parameter names to TP styles.
    The parameter name can be a generic name with wildcards (e.g. "*.weight") or a specific name (e.g. "layer_1.weight").
    """
    generic_param_name = re.sub(r"\d+", "*", parameter_name)
    plan = dict(tp_plan)
    if generic_param_name in plan:
        return plan[generic_param_name]
    elif "." in generic_param_name and generic_param_name.rsplit(".", 1)[0] in plan:
        return plan[generic_param_name.rsplit(".", 1)[0]]
    return None


def shard_and_distribute_module(model, param, empty_param, parameter_name, param_casting_dtype, is_contiguous, rank,
                                device_mesh):
    """
    Main uses cases:
    - column / rowise parallelism, you just shard all the weights of the layer (weight and bias)
    - packed layers: you slice the weights, then shard like above
    - custom operation: you could want to apply a custom hook
    """
    param_name, param_type = parameter_name.rsplit(".", 1) if "." in parameter_name else parameter_name
    tp_plan = tuple(model._tp_plan.items())
    module_to_tp = model.get_submodule(param_name)
    current_module_plan = _get_parameter_tp_plan(parameter_name, tp_plan)

    if current_module_plan is None:
        # Not sharded: every rank keeps a full copy
        param = param[...].to(param_casting_dtype)
        if is_contiguous:
            param = param.contiguous()
        return nn.Parameter(param, requires_grad=param.is_floating_point())

    local_rank = rank % device_mesh.size()
    if current_module_plan.startswith("colwise"):
        dim = 0 if param_type == "weight" or param.dim() == 1 else -1
        if "packed" in current_module_plan:
            param = get_packed_weights(param, empty_param, device_mesh, local_rank, dim)
        else:
            shard = empty_param.shape[dim] // device_mesh.size()
            param = param.narrow(dim, local_rank * shard, shard)
        placements = [Shard(dim)]
    elif current_module_plan.startswith("rowwise"):
        if param_type == "bias":
            placements = [Replicate()]
        else:
            shard = empty_param.shape[-1] // device_mesh.size()
            param = param.narrow(-1, local_rank * shard, shard)
            placements = [Shard(-1)]
    else:
        placements = [Replicate()]

    param = param.to(param_casting_dtype)
    if is_contiguous:
        param = param.contiguous()
    param = DTensor.from_local(param, device_mesh, placements, run_check=False, shape=empty_param.size(),
                               stride=empty_param.stride())
    return nn.Parameter(param, requires_grad=param.is_floating_point())


def apply_tensor_parallel(model: nn.Module, device_mesh, tp_plan: Optional[Dict[str, str]] = None):
    """
    Tensor parallelize the model across the given device mesh, following the model's (or the given) TP plan.
    Kept for the `model.tensor_parallel(device_mesh)` entry point.
    """
    if tp_plan is None:
        tp_plan = model._tp_plan
    if not tp_plan:
        raise ValueError(f"{model.__class__.__name__} has no `base_model_tp_plan` and no plan was given.")

    # Convert the plan keys (which may contain wildcards) to concrete module names
    module_plan = {}
    for name, _ in model.named_modules():
        generic = re.sub(r"\d+", "*", name)
        if generic in tp_plan:
            module_plan[name] = translate_to_torch_parallel_style(tp_plan[generic])

    logger.info(f"Applying tensor parallel plan to {len(module_plan)} modules over {device_mesh.size()} ranks")
    parallelize_module(model, device_mesh, module_plan)

    # Attention modules see only their local heads after sharding
    for name, module in model.named_modules():
        if hasattr(module, "num_heads") and name in {n.rsplit(".", 1)[0] for n in module_plan}:
            module.num_heads = module.num_heads // device_mesh.size()
        if hasattr(module, "num_key_value_heads") and name in {n.rsplit(".", 1)[0] for n in module_plan}:
            module.num_key_value_heads = module.num_key_value_heads // device_mesh.size()
    return model


def verify_tp_plan(expected_keys: List[str], tp_plan: Optional[Dict[str, str]]):
    """
    Verify the TP plan of the model, log a warning if the layers that were not sharded and the rules that were not
    applied.
    """
    if tp_plan is None:
        return

    generic_keys = {re.sub(r"\d+", "*", key) for key in expected_keys}
    unsharded_layers = set(generic_keys)
    unused_rules = tp_plan

    for key in generic_keys:
        param_name = key.rsplit(".", 1)[0] if "." in key else key
        generic_param_name = re.sub(r"\d+", "*", param_name)

        if generic_param_name in tp_plan:
            unused_rules.pop(generic_param_name, None)
            unsharded_layers.discard(key)
        elif "." in generic_param_name and (parent_param_name := generic_param_name.rsplit(".", 1)[0]) in tp_plan:
            unused_rules.pop(parent_param_name, None)
            unsharded_layers.discard(key)

    if len(unused_rules) > 0:
        logger.warning(f"The following TP rules were not applied on any of the layers: {unused_rules}")
    if len(unsharded_layers) > 0:
        logger.warning(f"The following layers were not sharded: {', '.join(unsharded_layers)}")
