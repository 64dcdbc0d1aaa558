# coding=utf-8
# Copyright 2018 The Google AI Language Team Authors, Facebook AI Research authors and The HuggingFace Inc. team.
# Copyright (c) 2018, NVIDIA CORPORATION.  All rights reserved.
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
import collections
import gc
import inspect
import json
import os
import re
import warnings
from contextlib import contextmanager
from functools import partial
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import torch
from packaging import version
from torch import Tensor, nn

from .configuration_utils import PretrainedConfig
from .pytorch_utils import id_tensor_storage
from .utils import (
    SAFE_WEIGHTS_INDEX_NAME,
    SAFE_WEIGHTS_NAME,
    WEIGHTS_INDEX_NAME,
    WEIGHTS_NAME,
    ContextManagers,
    is_accelerate_available,
    is_bitsandbytes_available,
    is_flash_attn_2_available,
    is_offline_mode,
    is_safetensors_available,
    logging,
)
from .utils.import_utils import importlib_metadata


if is_accelerate_available():
    from accelerate import dispatch_model, infer_auto_device_map, init_empty_weights
    from accelerate.utils import (
        check_tied_parameters_on_same_device,
        find_tied_parameters,
        get_balanced_memory,
        get_max_memory,
        load_offloaded_weights,
        offload_weight,
        save_offload_index,
        set_module_tensor_to_device,
    )

if is_safetensors_available():
    from safetensors import safe_open
    from safetensors.torch import load_file as safe_load_file
    from safetensors.torch import save_file as safe_save_file

logger = logging.get_logger(__name__)


_init_weights = True


def get_parameter_device(parameter: Union[nn.Module, "ModuleUtilsMixin"]):
    try:
        return next(parameter.parameters()).device
    except StopIteration:
        # For nn.DataParallel compatibility in PyTorch 1.5

        def find_tensor_attributes(module: nn.Module) -> List[Tuple[str, Tensor]]:
            tuples = [(k, v) for k, v in module.__dict__.items() if torch.is_tensor(v)]
            return tuples

        gen = parameter._named_members(get_members_fn=find_tensor_attributes)
        first_tuple = next(gen)
        return first_tuple[1].device


def load_state_dict(checkpoint_file: Union[str, os.PathLike]):
    """
    Reads a PyTorch checkpoint file, returning properly formatted errors if they arise.
    """
    if checkpoint_file.endswith(".safetensors") and is_safetensors_available():
        # Check format of the archive
        with safe_open(checkpoint_file, framework="pt") as f:
            metadata = f.metadata()
        if metadata.get("format") not in ["pt", "tf", "flax"]:
            raise OSError(
                f"The safetensors archive passed at {checkpoint_file} does not contain the valid metadata. Make sure "
                "you save your model with the `save_pretrained` method."
            )
        return safe_load_file(checkpoint_file)
    try:
        return torch.load(checkpoint_file, map_location="cpu")
    except Exception as e:
        raise OSError(
            f"Unable to load weights from pytorch checkpoint file for '{checkpoint_file}' "
            f"at '{checkpoint_file}'. "
            "If you tried to load a PyTorch model from a TF 2.0 checkpoint, please set from_tf=True."
        ) from e


class ModuleUtilsMixin:
    """
    A few utilities for `torch.nn.Modules`, to be used as a mixin.
    """

    @property
    def device(self) -> torch.device:
        """
        `torch.device`: The device on which the module is (assuming that all the module parameters are on the same
        device).
        """
        return get_parameter_device(self)

    @property
    def dtype(self) -> torch.dtype:
        """
        `torch.dtype`: The dtype of the module (assuming that all the module parameters have the same dtype).
        """
        return next(p.dtype for p in self.parameters() if p.is_floating_point())


class PreTrainedModel(nn.Module, ModuleUtilsMixin):
    config_class = None
    base_model_prefix = ""
    main_input_name = "input_ids"
    _no_split_modules = None
    _keep_in_fp32_modules = None
    supports_gradient_checkpointing = False
    _supports_flash_attn_2 = False

    @classmethod
    def _check_and_enable_flash_attn_2(
        cls, config, torch_dtype: Optional[torch.dtype] = None, device_map: Optional[Union[str, Dict[str, int]]] = None
    ) -> PretrainedConfig:
        """
        If you don't know about Flash Attention, check out the official repository of flash attention:
        https://github.com/Dao-AILab/flash-attention

        For using Flash Attention 1.0 you can do it directly via the `BetterTransformer` API, have a look at this
        specific section of the documentation to learn more about it:
        https://huggingface.co/docs/transformers/main/en/perf_infer_gpu_one#decoder-models
        """
        if not cls._supports_flash_attn_2:
            raise ValueError(
                "The current architecture does not support Flash Attention 2.0. Please open an issue on GitHub to "
                "request support for this architecture: https://github.com/huggingface/transformers/issues/new"
            )

        if not is_flash_attn_2_available():
            raise ImportError(
                "Flash Attention 2 is not available. Please refer to the documentation of"
                " https://github.com/Dao-AILab/flash-attention for installing it. Make sure to have at least"
                " the version 2.1.0"
            )

        if torch_dtype is None:
            logger.warning(
                "You are attempting to use Flash Attention 2.0 without specifying a torch dtype. This might lead to"
                " unexpected behaviour"
            )
        elif torch_dtype is not None and torch_dtype not in [torch.float16, torch.bfloat16]:
            raise ValueError(
                "Flash Attention 2.0 only supports torch.float16 and torch.bfloat16 dtypes. You passed"
                f" {torch_dtype}, this might lead to unexpected behaviour."
            )

        if device_map is None:
            if torch.cuda.is_available():
                logger.warning(
                    "You are attempting to use Flash Attention 2.0 with a model initialized on CPU. Make sure to move the"
                    " model to GPU after initializing it on CPU with `model.to('cuda')`."
                )
            else:
                raise ValueError(
                    "You are attempting to use Flash Attention 2.0 with a model initialized on CPU and with no GPU"
                    " available. This is not supported yet. Please make sure to have access to a GPU and either"
                    " initialise the model on a GPU by passing a device_map or initialising the model on CPU and then"
                    " moving it to GPU."
                )
        elif (
            device_map is not None
            and isinstance(device_map, dict)
            and ("cpu" in device_map.values() or "disk" in device_map.values())
        ):
            raise ValueError(
                "You are attempting to use Flash Attention 2.0 with a model dispatched on CPU or disk. This is not"
                " supported yet. Please make sure to initialise the model on a GPU by passing a device_map that"
                " contains only GPU devices as keys."
            )
        config._flash_attn_2_enabled = True
        return config

    def cuda(self, *args, **kwargs):
        # Checks if the model has been loaded in 8-bit
        if getattr(self, "is_quantized", False):
            raise ValueError(
                "Calling `cuda()` is not supported for `4-bit` or `8-bit` quantized models. Please use the model as it"
                " is, since the model has already been set to the correct devices and casted to the correct `dtype`."
            )
        else:
            return super().cuda(*args, **kwargs)

    def to(self, *args, **kwargs):
        # Checks if the model has been loaded in 8-bit
        if getattr(self, "is_quantized", False):
            raise ValueError(
                "`.to` is not supported for `4-bit` or `8-bit` bitsandbytes models. Please use the model as it is, since the"
                " model has already been set to the correct devices and casted to the correct `dtype`."
            )
        else:
            return super().to(*args, **kwargs)

    @classmethod
    def _resolve_device_map(
        cls,
        model,
        device_map,
        max_memory=None,
        torch_dtype=None,
        load_in_8bit=False,
        load_in_4bit=False,
        no_split_modules=None,
        keep_in_fp32_modules=None,
    ):
        """Factored-out part of `from_pretrained` that turns `device_map` / `max_memory` into a concrete map."""
        if load_in_8bit or load_in_4bit:
            if not (is_accelerate_available() and is_bitsandbytes_available()):
                raise ImportError(
                    "Using `load_in_8bit=True` requires Accelerate: `pip install accelerate` and the latest version of"
                    " bitsandbytes `pip install -i https://test.pypi.org/simple/ bitsandbytes` or"
                    " pip install bitsandbytes` "
                )
            if torch_dtype is None:
                torch_dtype = torch.float16
            if device_map is None:
                if not torch.cuda.is_available():
                    raise RuntimeError("No GPU found. A GPU is needed for quantization.")
                device_map = {"": torch.cuda.current_device()}
                logger.info(
                    "The device_map was not initialized. "
                    "Setting device_map to {'':torch.cuda.current_device()}. "
                    "If you want to use the model for inference, please set device_map ='auto' "
                )

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
                raise ValueError(
                    "You can't pass device_map as a negative int. If you want to put the model on the cpu, pass device_map = 'cpu' "
                )
            else:
                device_map = {"": device_map}

        if isinstance(device_map, str):
            special_dtypes = {}
            if keep_in_fp32_modules is not None:
                special_dtypes.update(
                    {
                        name: torch.float32
                        for name, _ in model.named_parameters()
                        if any(m in name for m in keep_in_fp32_modules)
                    }
                )

            target_dtype = torch_dtype
            if no_split_modules is None:
                raise ValueError(
                    f"{model.__class__.__name__} does not support `device_map='{device_map}'`. To implement support, the model "
                    "class needs to implement the `_no_split_modules` attribute."
                )
            if device_map not in ["auto", "balanced", "balanced_low_0", "sequential"]:
                raise ValueError(
                    "If passing a string for `device_map`, please choose 'auto', 'balanced', 'balanced_low_0' or "
                    "'sequential'."
                )

            kwargs = {"no_split_module_classes": no_split_modules}
            if "special_dtypes" in inspect.signature(infer_auto_device_map).parameters:
                kwargs["special_dtypes"] = special_dtypes
            elif len(special_dtypes) > 0:
                logger.warning(
                    "This model has some weights that should be kept in higher precision, you need to upgrade "
                    "`accelerate` to properly deal with them (`pip install --upgrade accelerate`)."
                )
            if device_map != "sequential":
                max_memory = get_balanced_memory(
                    model,
                    dtype=target_dtype,
                    low_zero=(device_map == "balanced_low_0"),
                    max_memory=max_memory,
                    **kwargs,
                )
            else:
                max_memory = get_max_memory(max_memory)
            kwargs["max_memory"] = max_memory
            # Make sure tied weights are tied before creating the device map.
            model.tie_weights()
            device_map = infer_auto_device_map(model, dtype=target_dtype, **kwargs)

            if load_in_8bit or load_in_4bit:
                # The LM head / tied weights or any last module can stay on disk / CPU
                device_map_without_lm_head = {
                    key: device_map[key] for key in device_map.keys() if key not in ["lm_head"]
                }
                if "cpu" in device_map_without_lm_head.values() or "disk" in device_map_without_lm_head.values():
                    raise ValueError(
                        "Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit"
                        " the quantized model."
                    )
                del device_map_without_lm_head

        elif device_map is not None:
            model.tie_weights()
            tied_params = find_tied_parameters(model)
            # check if we don't have tied param in different devices
            check_tied_parameters_on_same_device(tied_params, device_map)

        return device_map, torch_dtype

    def _dispatch_after_load(self, device_map, offload_folder=None, offload_index=None, output_loading_info=False):
        # Dispatch model with hooks on all devices if necessary
        if device_map is not None:
            device_map_kwargs = {
                "device_map": device_map,
                "offload_dir": offload_folder,
                "offload_index": offload_index,
            }
            if "skip_keys" in inspect.signature(dispatch_model).parameters:
                device_map_kwargs["skip_keys"] = self._skip_keys_device_placement
            dispatch_model(self, **device_map_kwargs)
            self.hf_device_map = device_map
        return self

def set_module_quantized_tensor_to_device(*args, **kwargs):
    from .utils.bitsandbytes import set_module_quantized_tensor_to_device as _impl

    return _impl(*args, **kwargs)
