# adopted from https://github.com/NVIDIA/apex/blob/master/apex/normalization/fused_layer_norm

import numbers

import torch
from torch import nn
from torch.nn import init
from torch.nn.parameter import Parameter

from internlm.utils.logger import get_logger

logger = get_logger(__file__)

try:
    from apex.normalization.fused_layer_norm import mixed_dtype_fused_rms_norm_affine

    apex_rmsnorm_impl = True
except (ModuleNotFoundError, ImportError):
    logger.warning("The torch implementation for MixFusedRMSNorm is slower than apex. Please note this!")
    apex_rmsnorm_impl = False


def manual_rms_norm(my_input, normalized_shape, weight, eps):
    # layer norm should always be calculated in float32
    dims = tuple(i for i in range(-1, -len(normalized_shape) - 1, -1))
    variance = my_input.to(torch.float32).pow(2).mean(dims, keepdim=True)
    my_input = my_input * torch.rsqrt(variance + eps)

    if weight is None:
        return my_input

    # convert into half-precision if necessary
    if weight.dtype in [torch.float16, torch.bfloat16]:
        my_input = my_input.to(weight.dtype)

    return weight * my_input


class RMSNormTorch(torch.nn.Module):
    """A custom PyTorch module for RMS normalization."""

    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()

        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = torch.Size(normalized_shape)
        self.eps = eps
        self.weight = Parameter(torch.empty(*normalized_shape))
        self.reset_parameters()

    def forward(self, _input: torch.Tensor):
        return manual_rms_norm(_input, self.normalized_shape, self.weight, self.eps)

    def reset_parameters(self):
        init.ones_(self.weight)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, ".format(**self.__dict__)


class MixFusedRMSNorm(torch.nn.Module):
    """A custom PyTorch module for RMS normalization.

    Uses apex's ``mixed_dtype_fused_rms_norm_affine`` CUDA kernel when apex was
    built with ``--cuda_ext``: the input stays in bf16/fp16 while the weight is
    kept in fp32 (mixed dtype), which is what the ZeRO-1 hybrid optimizer expects.
    """

    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()

        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = torch.Size(normalized_shape)
        self.eps = eps
        self.weight = Parameter(torch.empty(*normalized_shape))
        self.reset_parameters()

    def forward(self, _input: torch.Tensor):
        # TODO: Support hybrid precision training
        if apex_rmsnorm_impl:
            return mixed_dtype_fused_rms_norm_affine(_input, self.weight, self.normalized_shape, self.eps)
        else:
            return manual_rms_norm(_input, self.normalized_shape, self.weight, self.eps)

    def reset_parameters(self):
        init.ones_(self.weight)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, ".format(**self.__dict__)


def new_layer_norm(norm_type: str, normalized_shape, eps: float = 1e-5):
    """Builds the norm layer used by the transformer blocks.

    ``rmsnorm`` -> MixFusedRMSNorm (apex kernel if available),
    anything else -> apex FusedLayerNorm, falling back to ``nn.LayerNorm``.
    """
    if norm_type == "rmsnorm":
        return MixFusedRMSNorm(normalized_shape, eps=eps)

    try:
        from apex.normalization import FusedLayerNorm

        return FusedLayerNorm(normalized_shape, eps=eps)
    except (ModuleNotFoundError, ImportError):
        return nn.LayerNorm(normalized_shape, eps=eps)
