# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

# [Note] Getting the 'torchao' package:
# This script requires the 'torchao' package to function correctly.
# Please ensure you have this package installed from the appropriate repository.
# You can obtain it from https://github.com/pytorch/ao by following the
# installation instructions.

from functools import partial

import torch
import torch.nn as nn

from torchtitan.config_manager import JobConfig
from torchtitan.distributed import ParallelDims
from torchtitan.tools.logging import logger


def has_cuda_capability(major: int, minor: int) -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability() >= (
        major,
        minor,
    )


def module_filter_fn(mod: nn.Module, fqn: str, filter_fqns: list[str]) -> bool:
    """Only swap nn.Linear layers whose dims are multiples of 16 and not filtered out."""
    if not isinstance(mod, nn.Linear):
        return False
    dims_multiples_of_16 = mod.weight.shape[0] % 16 == 0 and mod.weight.shape[1] % 16 == 0
    is_filtered = any(f in fqn for f in filter_fqns)
    return dims_multiples_of_16 and not is_filtered


class Float8Converter:
    def __init__(self, job_config: JobConfig, parallel_dims: ParallelDims | None = None):
        self.enabled = False

        float8_config = job_config.float8
        if "float8" not in job_config.model.converters:
            return
        if not has_cuda_capability(8, 9):
            raise ValueError(
                "Failed to swap to Float8Linear because float8 is only supported on SM89 or later"
            )
        try:
            from torchao.float8 import Float8LinearConfig
        except ImportError as e:
            raise ImportError(
                "torchao is not installed. Please install it to use float8 linear layers."
            ) from e

        if float8_config.recipe_name is not None:
            assert not float8_config.enable_fsdp_float8_all_gather, (
                "using `float8_config.enable_fsdp_float8_all_gather` together with "
                "`float8_config.recipe_name` is not supported"
            )
            self.config = Float8LinearConfig.from_recipe_name(float8_config.recipe_name)
            self.precompute_scale = False
            logger.info(f"Float8 training active with recipe {float8_config.recipe_name}")
        else:
            enable_fsdp_float8_all_gather = (
                parallel_dims is not None
                and parallel_dims.dp_shard_enabled
                and float8_config.enable_fsdp_float8_all_gather
            )
            self.config = Float8LinearConfig(
                enable_fsdp_float8_all_gather=enable_fsdp_float8_all_gather,
                force_recompute_fp8_weight_in_bwd=True,
            )
            self.precompute_scale = (
                enable_fsdp_float8_all_gather and float8_config.precompute_float8_dynamic_scale_for_fsdp
            )
            logger.info("Float8 tensorwise scaled training active")

        self.filter_fn = partial(module_filter_fn, filter_fqns=float8_config.filter_fqns)
        self.enabled = True

    def convert(self, model: nn.Module):
        if not self.enabled:
            return
        from torchao.float8 import convert_to_float8_training

        convert_to_float8_training(
            model,
            config=self.config,
            module_filter_fn=self.filter_fn,
        )
        logger.info(
            "Swapped to Float8Linear layers with enable_fsdp_float8_all_gather="
            f"{self.config.enable_fsdp_float8_all_gather}"
        )

    def precompute_float8_dynamic_scale_for_fsdp(self, model: nn.Module | list[nn.Module]):
        if not self.enabled or not self.precompute_scale:
            return
        from torchao.float8 import precompute_float8_dynamic_scale_for_fsdp

        models = [model] if isinstance(model, nn.Module) else model
        for m in models:
            precompute_float8_dynamic_scale_for_fsdp(m)


def maybe_enable_amp(parallel_dims: ParallelDims, mixed_precision_param: str, device_type: str):
    if parallel_dims.fsdp_enabled:
        # FSDP handles mixed precision internally
        logger.info("Mixed precision training is handled by fully_shard")
        return None
    if parallel_dims.tp_enabled or parallel_dims.pp_enabled:
        logger.warning("AMP is not supported with TP/PP; running in full precision")
        return None
    logger.info("Mixed precision training is handled by AMP")
    dtype = torch.bfloat16 if mixed_precision_param == "bfloat16" else torch.float16
    return torch.autocast(device_type, dtype=dtype)


def report_float8_support():
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        logger.info(f"CUDA compute capability {major}.{minor}, float8 supported: {(major, minor) >= (8, 9)}")
    else:
        logger.info("No CUDA device visible; float8 disabled")
