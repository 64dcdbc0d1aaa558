# coding=utf-8
# Copyright 2018 The Google AI Language Team Authors, Facebook AI Research authors and The HuggingFace Inc. team.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
import collections
import copy
import gc
import os
import warnings
from typing import Dict, Optional, Union

import torch
from torch import nn

from .utils import (
    is_accelerate_available,
    is_flash_attn_2_available,
    is_torch_sdpa_available,
    logging,
)


if is_accelerate_available():
    from accelerate import dispatch_model, infer_auto_device_map, init_empty_weights
    from accelerate.utils import get_balanced_memory, get_max_memory

logger = logging.get_logger(__name__)

_init_weights = True


def caching_allocator_warmup(model, expanded_device_map: Dict, factor: int = 2):
    """
    Warm up the caching allocator based on the size of the model tensors that will reside on each device. It allows
    one large call to Malloc instead of recursively calling it later when loading the model.
    """
    accelerator_device_map = {
        param: torch.device(device)
        for param, device in expanded_device_map.items()
        if str(device) not in ["cpu", "disk"]
    }
    if not len(accelerator_device_map):
        return

    total_byte_count = collections.defaultdict(lambda: 0)
    for param_name, device in accelerator_device_map.items():
        param = model.get_parameter(param_name)
        total_byte_count[device] += param.numel() * param.element_size()

    for device, byte_count in total_byte_count.items():
        if device.type == "cuda":
            index = device.index if device.index is not None else torch.cuda.current_device()
            device_memory = torch.cuda.mem_get_info(index)[0]
            # Leave some headroom so that the warmup itself cannot OOM
            byte_count = min(byte_count, int(0.95 * device_memory))
        _ = torch.empty(byte_count // factor, dtype=torch.float16, device=device, requires_grad=False)


class PreTrainedModel(nn.Module):
    config_class = None
    base_model_prefix = ""
    _no_split_modules = None
    _supports_flash_attn_2 = False
    _supports_sdpa = False

    @classmethod
    def _autoset_attn_implementation(cls, config, use_flash_attention_2: bool = False, torch_dtype=None,
                                     device_map: Optional[Union[str, Dict[str, int]]] = None):
        requested_attn_implementation = config._attn_implementation_internal
        if use_flash_attention_2:
            requested_attn_implementation = "flash_attention_2"

        if requested_attn_implementation == "flash_attention_2":
            cls._check_and_enable_flash_attn_2(config, torch_dtype=torch_dtype, device_map=device_map)
        elif requested_attn_implementation in [None, "sdpa"] and is_torch_sdpa_available():
            config = cls._check_and_enable_sdpa(config, hard_check_only=requested_attn_implementation is not None)
        else:
            config._attn_implementation = "eager"
        return config

    @classmethod
    def _check_and_enable_flash_attn_2(cls, config, torch_dtype=None, device_map=None, hard_check_only=False):
        if not cls._supports_flash_attn_2:
            raise ValueError(f"{cls.__name__} does not support Flash Attention 2.0 yet.")

        if not is_flash_attn_2_available():
            preface = "FlashAttention2 has been toggled on, but it cannot be used due to the following error:"
            install_message = "Please refer to the documentation of https://huggingface.co/docs/transformers/perf_infer_gpu_one#flashattention-2 to install Flash Attention 2."
            raise ImportError(f"{preface} the package flash_attn seems to be not installed. {install_message}")

        if torch_dtype is None:
            logger.warning_once("You are attempting to use Flash Attention 2.0 without specifying a torch dtype.")
        elif torch_dtype is not None and torch_dtype not in [torch.float16, torch.bfloat16]:
            raise ValueError("Flash Attention 2.0 only supports torch.float16 and torch.bfloat16 dtypes.")

        if device_map is None:
            if torch.cuda.is_available():
                logger.warning_once(
                    "You are attempting to use Flash Attention 2.0 with a model not initialized on GPU. Make sure to move"
                    " the model to GPU after initializing it on CPU with `model.to('cuda')`."
                )
            else:
                raise ValueError("You are attempting to use Flash Attention 2.0 with a model not initialized on GPU "
                                 "and with no GPU available.")
        elif device_map is not None and isinstance(device_map, dict) and ("cpu" in device_map.values()
                                                                          or "disk" in device_map.values()):
            raise ValueError("You are attempting to use Flash Attention 2.0 with a model dispatched on CPU or disk.")
        if not hard_check_only:
            config._attn_implementation = "flash_attention_2"
        return config

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *model_args, config=None, torch_dtype=None,
                        device_map=None, max_memory=None, low_cpu_mem_usage=None, offload_folder=None, **kwargs):
        if device_map is not None:
            if low_cpu_mem_usage is None:
                low_cpu_mem_usage = True
            elif not low_cpu_mem_usage:
                raise ValueError("Passing along a `device_map` requires `low_cpu_mem_usage=True`")

        if isinstance(device_map, torch.device):
            device_map = {"": device_map}
        elif isinstance(device_map, str) and device_map not in ["auto", "balanced", "balanced_low_0", "sequential"]:
            try:
                device_map = {"": torch.device(device_map)}
            except RuntimeError:
                raise ValueError(
                    "When passing device_map as a string, the value needs to be a device name (e.g. cpu, cuda:0) or "
                    f"'auto', 'balanced', 'balanced_low_0', 'sequential' but found {device_map}."
                )
        elif isinstance(device_map, int):
            if device_map < 0:
                raise ValueError("You can't pass device_map as a negative int.")
            else:
                device_map = {"": device_map}

        if low_cpu_mem_usage and not is_accelerate_available():
            raise ImportError("Using `low_cpu_mem_usage=True` or a `device_map` requires Accelerate: `pip install accelerate`")

        model = cls._load_pretrained_model(pretrained_model_name_or_path, config, torch_dtype, low_cpu_mem_usage)

        if isinstance(device_map, str):
            special_dtypes = {}
            no_split_modules = model._no_split_modules or []
            if device_map != "sequential":
                max_memory = get_balanced_memory(model, dtype=torch_dtype, max_memory=max_memory,
                                                 no_split_module_classes=no_split_modules,
                                                 low_zero=(device_map == "balanced_low_0"))
            else:
                max_memory = get_max_memory(max_memory)
            device_map = infer_auto_device_map(model, dtype=torch_dtype, max_memory=max_memory,
                                               no_split_module_classes=no_split_modules,
                                               special_dtypes=special_dtypes)

        if device_map is not None:
            device_map_kwargs = {"device_map": device_map, "offload_dir": offload_folder}
            dispatch_model(model, **device_map_kwargs)

        model.eval()
        return model

    @classmethod
    def _load_pretrained_model(cls, path, config, torch_dtype, low_cpu_mem_usage):
        if low_cpu_mem_usage:
            with init_empty_weights():
                model = cls(config)
        else:
            model = cls(config)
        gc.collect()
        return model

    def get_memory_footprint(self, return_buffers=True):
        mem = sum([param.nelement() * param.element_size() for param in self.parameters()])
        if return_buffers:
            mem_bufs = sum([buf.nelement() * buf.element_size() for buf in self.buffers()])
            mem = mem + mem_bufs
        return mem

    def cuda(self, *args, **kwargs):
        if getattr(self, "quantization_method", None) == "gptq":
            raise ValueError("Calling `cuda()` is not supported for `4-bit` quantized models with GPTQ.")
        return super().cuda(*args, **kwargs)

    def to(self, *args, **kwargs):
        if getattr(self, "is_loaded_in_8bit", False):
            raise ValueError("`.to` is not supported for `8-bit` bitsandbytes models.")
        return super().to(*args, **kwargs)
