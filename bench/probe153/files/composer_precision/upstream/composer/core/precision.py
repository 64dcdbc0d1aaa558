# Copyright 2022 MosaicML Composer authors
# SPDX-License-Identifier: Apache-2.0

"""Enum class for the numerical precision to be used by the model."""

import contextlib
import os
import textwrap
from typing import Any, Generator, Optional, Union

import torch

from composer.utils import StringEnum, is_xla_installed

try:
    import transformer_engine.pytorch as te
    from transformer_engine.common.recipe import DelayedScaling, Format

    te_installed = True
except ImportError:
    te_installed = False

__all__ = ['Precision', 'get_precision_context', '_validate_precision', 'fp8_supported']


class Precision(StringEnum):
    """Enum class for the numerical precision to be used by the model.

    Attributes:
        FP32: Use 32-bit floating-point precision. Compatible with CPUs and GPUs.
        AMP_FP16: Use :mod:`torch.cuda.amp` with 16-bit floating-point precision. Only compatible
            with GPUs.
        AMP_BF16: Use :mod:`torch.cuda.amp` with 16-bit BFloat precision.
        AMP_FP8: Use :mod:`transformer_engine.pytorch.fp8_autocast` with 8-bit FP8 precison.
    """
    FP32 = 'fp32'
    AMP_FP16 = 'amp_fp16'
    AMP_BF16 = 'amp_bf16'
    AMP_FP8 = 'amp_fp8'


def fp8_supported() -> bool:
    """Whether the current GPU can run TransformerEngine FP8 GEMMs (Ada / Hopper)."""
    if not te_installed:
        return False
    if not torch.cuda.is_available():
        return False
    return torch.cuda.get_device_capability() >= (8, 9)


def _default_fp8_recipe(precision_config: Optional[dict[str, Any]]) -> 'DelayedScaling':
    precision_config = dict(precision_config or {})
    fp8_format = precision_config.pop('fp8_format', 'HYBRID')
    if isinstance(fp8_format, str):
        fp8_format = getattr(Format, fp8_format.upper())
    defaults = {
        'fp8_format': fp8_format,
        'amax_history_len': 16,
        'amax_compute_algo': 'max',
    }
    defaults.update(precision_config)
    return DelayedScaling(**defaults)


@contextlib.contextmanager
def get_precision_context(
    precision: Union[str, Precision],
    precision_config: Optional[dict[str, Any]] = None,
    fp8_autocast_enabled: bool = True,
) -> Generator[None, None, None]:
    """Returns a context manager to automatically cast to a specific precision.

    Args:
        precision (str | Precision): Precision for the context
        precision_config (Optional[dict[str, Any]]): Config for FP8 scaling strategy. See parameters for
            `DelayedScaling <https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/api/common.html?highlight=delayedscaling#transformer_engine.common.recipe.DelayedScaling>`_.
        fp8_autocast_enabled (bool): Whether to enable FP8 autocasting. Defaults to True.
    """
    precision = Precision(precision)
    if precision == Precision.FP32:
        if torch.cuda.is_available():
            with torch.autocast('cuda', enabled=False):
                yield
        else:
            # Yield here to avoid warnings about cuda not being available
            yield
    elif precision == Precision.AMP_FP16:
        # Retain compatibility with PyTorch < 1.10
        if torch.cuda.is_available():
            with torch.cuda.amp.autocast(True):
                yield
        else:
            yield
    elif precision == Precision.AMP_BF16:
        if torch.cuda.is_available():
            with torch.autocast('cuda', dtype=torch.bfloat16, enabled=True):
                yield
        elif is_xla_installed():
            with torch.autocast('xla', dtype=torch.bfloat16, enabled=True):
                yield
        else:
            os.environ['XLA_USE_BF16'] = '1'
            yield
    elif precision == Precision.AMP_FP8:
        if fp8_supported():
            fp8_recipe = _default_fp8_recipe(precision_config)
            with te.fp8_autocast(enabled=fp8_autocast_enabled, fp8_recipe=fp8_recipe):
                # The te.onnx_export flag ensures that we save all fp8 buffers
                # as tensors instead of bytes. This is necessary for proper
                # saving and resumption of checkpoints.
                with te.onnx_export(enabled=True):
                    yield
        else:
            if te_installed:
                raise RuntimeError('AMP_FP8 precision is used but current device does not support it.')
            else:
                raise ImportError(
                    textwrap.dedent(
                        """\
                        AMP_FP8 precision is used but TransformerEngine is not installed.
                        After making sure torch is already installed, please install it using
                        pip install --upgrade git+https://github.com/NVIDIA/TransformerEngine.git@stable""",
                    ),
                )
    else:
        raise ValueError(f'Unsupported precision: {precision}')


def _validate_precision(precision: Precision, device: Any) -> None:
    """Raise if ``precision`` cannot run on ``device``."""
    device_name = getattr(device, 'name', str(device))
    if device_name == 'cpu' and precision != Precision.FP32:
        raise ValueError(f'{precision} is not supported for CPU training.')
    if precision == Precision.AMP_FP8 and not fp8_supported():
        raise ValueError(
            'amp_fp8 requires TransformerEngine and an NVIDIA GPU with compute capability >= 8.9 '
            '(e.g. H100, L40S). Use amp_bf16 instead.',
        )
    if precision == Precision.AMP_FP16 and device_name == 'tpu':
        raise ValueError('amp_fp16 is not supported on TPU, use amp_bf16.')


def get_autocast_dtype(precision: Union[str, Precision]) -> torch.dtype:
    """Map a precision to the dtype autocast produces for matmuls."""
    precision = Precision(precision)
    if precision == Precision.AMP_FP16:
        return torch.float16
    if precision in (Precision.AMP_BF16, Precision.AMP_FP8):
        return torch.bfloat16
    return torch.float32


def default_precision_for_device(device_name: str) -> Precision:
    """Pick a sensible default when the user did not specify ``precision``."""
    if device_name == 'gpu':
        if torch.cuda.is_bf16_supported():
            return Precision.AMP_BF16
        return Precision.AMP_FP16
    if device_name in ('tpu', 'neuron'):
        return Precision.AMP_BF16
    return Precision.FP32
