# Copyright 2022 MosaicML Composer authors
# SPDX-License-Identifier: Apache-2.0

"""Low Precision LayerNorm: runs LayerNorm in the autocast dtype instead of fp32."""

from __future__ import annotations

import logging
import warnings
from typing import Optional, Sequence, Union

import torch
import torch.nn.functional as F
from torch.optim import Optimizer

from composer.core import Algorithm, Event, State
from composer.loggers import Logger
from composer.utils import module_surgery

log = logging.getLogger(__name__)

try:
    from apex.normalization.fused_layer_norm import FusedLayerNorm as APEXFusedLayerNorm
    APEX_INSTALLED = True
except ImportError:
    APEX_INSTALLED = False


def apply_low_precision_layernorm(
    model,
    precision,
    optimizers: Optional[Union[Optimizer, Sequence[Optimizer]]] = None,
):
    if precision not in ("amp_fp16", "amp_bf16"):
        warnings.warn(UserWarning("LowPrecisionLayerNorm only applies to AMP_FP16 and AMP_BF16 precisions."))
        return model

    policy = {torch.nn.LayerNorm: _to_LPLayerNorm}
    if APEX_INSTALLED:
        policy[APEXFusedLayerNorm] = _to_LPLayerNorm

    replaced_instances = module_surgery.replace_module_classes(module=model, optimizers=optimizers, policies=policy)
    if len(replaced_instances) == 0:
        warnings.warn(NoEffectWarning("No instances of torch.nn.LayerNorm found."))
    log.info(f"Successfully replaced {len(replaced_instances)} instances of LayerNorm with LowPrecisionLayerNorm")
    return model


class NoEffectWarning(UserWarning):
    pass


class LowPrecisionLayerNorm(Algorithm):
    """Replaces all instances of :class:`torch.nn.LayerNorm` with a low-precision LayerNorm.

    LowPrecisionLayerNorm is a LayerNorm that runs in the current autocast dtype
    (fp16 or bf16) rather than being upcast to fp32 by autocast. On GPUs with
    fast half-precision units this yields a modest throughput gain.
    """

    def __init__(self, apply_at: Event = Event.INIT):
        self.apply_at = apply_at
        if self.apply_at not in {Event.INIT, Event.AFTER_LOAD}:
            raise ValueError("LowPrecisionLayerNorm only supports application on Event.INIT and Event.AFTER_LOAD.")

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(apply_at={self.apply_at})"

    @staticmethod
    def required_on_load() -> bool:
        return True

    def match(self, event: Event, state: State) -> bool:
        return event == self.apply_at

    def apply(self, event: Event, state: State, logger: Logger) -> Optional[int]:
        del event, logger
        apply_low_precision_layernorm(model=state.model, optimizers=state.optimizers, precision=state._precision)


class LPLayerNorm(torch.nn.LayerNorm):

    def __init__(self, normalized_shape, eps=1e-05, elementwise_affine=True, device=None, dtype=None):
        super().__init__(
            normalized_shape=normalized_shape,
            eps=eps,
            elementwise_affine=elementwise_affine,
            device=device,
            dtype=dtype,
        )

    def forward(self, x):
        module_device = x.device
        downcast_x = _cast_if_autocast_enabled(x)
        downcast_weight = _cast_if_autocast_enabled(self.weight) if self.weight is not None else self.weight
        downcast_bias = _cast_if_autocast_enabled(self.bias) if self.bias is not None else self.bias
        with torch.autocast(enabled=False, device_type=module_device.type):
            return F.layer_norm(downcast_x, self.normalized_shape, downcast_weight, downcast_bias, self.eps)


def _cast_if_autocast_enabled(tensor):
    if torch.is_autocast_enabled():
        if tensor.device.type == "cuda":
            dtype = torch.get_autocast_gpu_dtype()
        elif tensor.device.type == "cpu":
            dtype = torch.get_autocast_cpu_dtype()
        else:
            raise NotImplementedError()
        return tensor.to(dtype=dtype)
    return tensor


def check_if_apex_installed():
    if not APEX_INSTALLED:
        raise ImportError(
            "https://github.com/NVIDIA/apex is not installed. The Low Precision LayerNorm algorithm cannot be applied on AMP_BF16 with PyTorch <1.13 without Apex. "
            "The MosaicML Docker Images (https://hub.docker.com/r/mosaicml/pytorch) contain a copy of Apex for easy use."
        )


def _to_LPLayerNorm(layer: torch.nn.Module, module_index: int) -> LPLayerNorm:
    """Defines a replacement policy from a :class:`torch.nn.LayerNorm` to a :class:`LPLayerNorm`"""
    if not isinstance(layer, torch.nn.LayerNorm):
        raise TypeError(f"Expected torch.nn.LayerNorm, got {layer.__class__}")
    lp_layernorm = LPLayerNorm(layer.normalized_shape, layer.eps, layer.elementwise_affine)

    with torch.no_grad():
        if layer.weight is None:
            lp_layernorm.register_parameter("weight", None)
        else:
            lp_layernorm.weight.copy_(layer.weight)
        if layer.bias is None:
            lp_layernorm.register_parameter("bias", None)
        else:
            lp_layernorm.bias.copy_(layer.bias)

    return lp_layernorm
