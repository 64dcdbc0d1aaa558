"""
Single-process, multi-GPU tensor parallelism: the module is sliced into one shard per device, inputs are broadcast
to every shard, shards run in parallel threads and partial results are combined with cross-device collectives.
"""
import logging
import threading
from contextlib import nullcontext
from typing import Any, Optional, Sequence, Union

import torch
from torch import nn
from torch.cuda import nccl
from torch.nn.parallel import parallel_apply
from torch.nn.parallel._functions import Broadcast

from tensor_parallel.config import Config, add_lora_rules
from tensor_parallel.shard import make_shard
from tensor_parallel.utils import nested_flatten, nested_pack

logger = logging.getLogger(__file__)


def canonicalize_device(device: Union[torch.device, str, int]) -> torch.device:
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", index=torch.cuda.current_device())
    return device


def check_device_ids(device_ids: Optional[Sequence[torch.device]]) -> Sequence[torch.device]:
    if device_ids is None:
        device_ids = (
            [f"cuda:{i}" for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else ["cpu"]
        )
    return tuple(map(canonicalize_device, device_ids))


def broadcast_coalesced(tensors: Sequence[torch.Tensor], devices: Sequence[torch.device], *, all_cuda: bool = None,
                        **kwargs):
    """Replicate every tensor onto every device, using NCCL-backed coalesced broadcast when all devices are GPUs."""
    if all_cuda is None:
        all_cuda = all(device.type == "cuda" for device in devices)
    if not all_cuda:
        broadcasted = [list() for _ in devices]
        for x in tensors:
            for i, device in enumerate(devices):
                broadcasted[i].append(x.to(device, non_blocking=True))
        return broadcasted
    flat_outputs = Broadcast.apply(devices, *tensors)
    return [flat_outputs[i * len(tensors): (i + 1) * len(tensors)] for i in range(len(devices))]


class NCCLAllReduceFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, *inputs):
        outputs = [torch.empty_like(x) for x in inputs]
        nccl.all_reduce(inputs, outputs)
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        return NCCLAllReduceFunction.apply(*grad_outputs)


def _naive_all_reduce(tensors: Sequence[torch.Tensor]):
    """Gather on the first device, reduce there and send the result back; works on any device type."""
    total = tensors[0].clone()
    for x in tensors[1:]:
        total += x.to(total.device, non_blocking=True)
    return tuple(total.to(x.device, non_blocking=True) for x in tensors)


def all_reduce(tensors: Sequence[torch.Tensor]):
    if all(t.is_cuda for t in tensors) and nccl.is_available(tensors):
        return NCCLAllReduceFunction.apply(*tensors)
    return _naive_all_reduce(tensors)


class TensorParallel(nn.Module):
    def __init__(
        self,
        module: nn.Module,
        device_ids: Optional[Sequence[torch.device]] = None,
        output_device: Optional[torch.device] = None,
        output_device_index: Optional[int] = None,
        tensor_parallel_config: Optional[Config] = None,
        delay_init: bool = False,
        **kwargs,
    ):
        super().__init__()
        original_params = sum(p.numel() for p in module.parameters())
        assert output_device is None or output_device_index is None, "please specify either device or index, not both"
        device_ids = check_device_ids(device_ids)

        if output_device is not None:
            output_device = canonicalize_device(output_device)
            assert output_device in device_ids, f"Output device {output_device} not in {device_ids}"
            output_device_index = device_ids.index(output_device)
            del output_device
        elif output_device_index is None:
            output_device_index = 0

        self.module_shards = nn.ModuleList()
        self.devices = device_ids
        self.output_device_index = output_device_index
        self.all_cuda = all(device.type == "cuda" for device in self.devices)
        self.device_ids = [d.index for d in device_ids]
        self.need_delayed_init = delay_init

        if len(device_ids) <= 1:
            self.module_shards.append(module)
            if len(device_ids) == 1 and not delay_init:
                self.module_shards[0].to(device_ids[0])
            return

        if tensor_parallel_config is None:
            tensor_parallel_config = Config.get_default_config(module, self.devices)
            logger.info("Using automatic config: sharding individual linear/conv/emb layers")
        tensor_parallel_config = add_lora_rules(module, tensor_parallel_config)
        self.tensor_parallel_config = tensor_parallel_config

        config_with_ops = tensor_parallel_config.create_collective_ops(self.devices, all_reduce=all_reduce)
        # ^-- creates a copy of comfig with collective op instances, such as AllReduce and AllGather

        for rank, device in enumerate(self.devices):
            if delay_init:
                device = torch.device("cpu")
            self.module_shards.append(
                make_shard(module, device, config_with_ops, rank=rank, world_size=len(self.devices))
            )

        # self-diagnostics: check if the model was sharded properly
        params_per_shard = [sum(p.numel() for p in shard.parameters()) for shard in self.module_shards]
        assert sum(params_per_shard) >= original_params, "Internal assert failed: lost some parameters during sharding"
        self.param_fractions = tuple(params_i / original_params for params_i in params_per_shard)
        inefficiency_rate = (sum(self.param_fractions) - 1) / len(device_ids)  # extra params rate per GPU
        log_level = logging.DEBUG if inefficiency_rate < 0.1 else logging.WARNING
        logger.log(
            log_level,
            f"Inefficiency warning: model has {original_params} params but shards have {params_per_shard} params. "
            f"This means that each device uses {inefficiency_rate * 100:.3f}% extra memory for parameters",
        )
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def prepare_delayed_init(self):
        for shard, device in zip(self.module_shards, self.devices):
            shard.to(device)
        self.need_delayed_init = False

    def forward(self, *args, **kwargs):
        if self.need_delayed_init:
            self.prepare_delayed_init()
        if len(self.module_shards) <= 1:
            return [self.module_shards[0](*args, **kwargs)][self.output_device_index]
        args_and_kwargs = (args, kwargs)
        flat_tensors = [obj for obj in nested_flatten(args_and_kwargs) if isinstance(obj, torch.Tensor)]
        flat_tensors_replicated = broadcast_coalesced(flat_tensors, self.devices, all_cuda=self.all_cuda)
        next_tensor_index = 0
        args_and_kwargs_replicated = [list() for _ in self.device_ids]
        for obj in nested_flatten(args_and_kwargs):
            if isinstance(obj, torch.Tensor):
                for idx in range(len(self.module_shards)):
                    args_and_kwargs_replicated[idx].append(flat_tensors_replicated[idx][next_tensor_index])
                next_tensor_index += 1
            else:
                for idx in range(len(self.module_shards)):
                    args_and_kwargs_replicated[idx].append(obj)
        for idx in range(len(self.module_shards)):
            args_and_kwargs_replicated[idx] = nested_pack(args_and_kwargs_replicated[idx], args_and_kwargs)
        inputs, kwargs_tup = zip(*args_and_kwargs_replicated)
        if self.all_cuda:
            return parallel_apply(self.module_shards, inputs, kwargs_tup, self.devices)[self.output_device_index]
        else:
            return parallel_apply(self.module_shards, inputs, kwargs_tup)[self.output_device_index]

    def set_preserve_shards_when_saving(self, value: bool):
        self.preserve_shards_when_saving = value

    def state_dict(self, *args, **kwargs):
        if len(self.module_shards) == 1 or getattr(self, "preserve_shards_when_saving", True):
            return super().state_dict(*args, **kwargs)
        raise NotImplementedError("gathering sharded state dicts is done by tensor_parallel.state_actions")
