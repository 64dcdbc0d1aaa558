# Copyright 2022 MosaicML Composer authors
# SPDX-License-Identifier: Apache-2.0

"""Monitor throughput during training."""
from __future__ import annotations

import warnings
from collections import deque
from typing import Any, Callable, Deque, Dict, Optional, Union

import torch

from composer.core import Callback, State
from composer.loggers import Logger
from composer.models.base import ComposerModel
from composer.utils import dist

__all__ = ['SpeedMonitor']

GPU_AVAILABLE_FLOPS = {
    # source: https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet
    'h100-sxm': {
        'fp64': 67e12,
        'fp32': 67e12,
        'tf32': 989e12 / 2,
        'fp16': 1.979e15 / 2,
        'amp_fp16': 1.979e15 / 2,
        'bf16': 1.979e15 / 2,
        'amp_bf16': 1.979e15 / 2,
        'fp8': 3.958e15 / 2,
        'amp_fp8': 3.958e15 / 2,
    },
    'a100': {
        'fp64': 19.5e12,
        'fp32': 19.5e12,
        'tf32': 156e12,
        'fp16': 312e12,
        'amp_fp16': 312e12,
        'bf16': 312e12,
        'amp_bf16': 312e12,
    },
    'a10': {
        'fp32': 31.2e12,
        'tf32': 62.5e12,
        'fp16': 125e12,
        'amp_fp16': 125e12,
        'bf16': 125e12,
        'amp_bf16': 125e12,
    },
    'v100-sxm': {
        'fp64': 7.8e12,
        'fp32': 15.7e12,
        'fp16': 125e12,
        'amp_fp16': 125e12,
    },
}


def get_gpu_flops_available(state: State):
    # Return 0 if no CUDA device (e.g., when running with CPU only)
    if not torch.cuda.is_available():
        return 0

    # torch.cuda.get_device_name() ex output: 'NVIDIA A100-SXM4-40GB'
    device_name = torch.cuda.get_device_name().lower()
    if 'h100' in device_name and 'hbm3' in device_name:
        device_name = 'h100-sxm'
    elif 'h100' in device_name and ('pcie' in device_name or 'hbm2e' in device_name):
        device_name = 'h100-pcie'
    elif 'a100' in device_name:
        device_name = 'a100'
    elif 'a10' in device_name:
        device_name = 'a10'
    elif 'v100-sxm' in device_name:
        device_name = 'v100-sxm'
    else:
        device_name = None

    gpu_flops_available = None
    if device_name is not None:
        try:
            gpu_flops_available = int(GPU_AVAILABLE_FLOPS[device_name][state.precision.value])
        except KeyError:
            gpu_flops_available = None

    if gpu_flops_available is None:
        warnings.warn(
            f'gpu_flop count not found for {device_name} with precision: {state.precision.value}; '
            'MFU cannot be calculated and reported. gpu_flops_available can be manually '
            'overridden by setting gpu_flops_available in SpeedMonitor.',
        )
        # Setting to 0 will disable MFU computation and prevent
        # the speed monitor from running this helper every batch
        gpu_flops_available = 0

    return gpu_flops_available


class SpeedMonitor(Callback):
    """Logs the training throughput and utilization (MFU)."""

    def __init__(
        self,
        window_size: int = 100,
        gpu_flops_available: Optional[Union[float, int]] = None,
        time_unit: str = 'hours',
    ):
        self.history_samples: Deque[int] = deque(maxlen=window_size + 1)
        self.history_tokens: Deque[int] = deque(maxlen=window_size + 1)
        self.history_wct: Deque[float] = deque(maxlen=window_size + 1)
        self.history_flops: Deque[float] = deque(maxlen=window_size + 1)
        self.gpu_flops_available = gpu_flops_available
        self.divider = {'seconds': 1, 'minutes': 60, 'hours': 3600, 'days': 86400}[time_unit]
        self.total_eval_wct = 0.0

    def state_dict(self) -> Dict[str, Any]:
        return {'total_eval_wct': self.total_eval_wct}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        self.total_eval_wct = state['total_eval_wct']

    def init(self, state: State, logger: Logger) -> None:
        if self.gpu_flops_available is None:
            self.gpu_flops_available = get_gpu_flops_available(state)

    def batch_end(self, state: State, logger: Logger):
        self.history_samples.append(state.timestamp.sample.value)
        self.history_tokens.append(state.timestamp.token.value)
        self.history_wct.append(state.timestamp.total_wct.total_seconds())

        if len(self.history_wct) == self.history_wct.maxlen:
            world_size = dist.get_world_size()
            elapsed_batches = len(self.history_samples) - 1
            elapsed_samples = self.history_samples[-1] - self.history_samples[0]
            elapsed_tokens = self.history_tokens[-1] - self.history_tokens[0]
            elapsed_wct = self.history_wct[-1] - self.history_wct[0]
            logger.log_metrics({
                'throughput/batches_per_sec': elapsed_batches * world_size / elapsed_wct,
                'throughput/samples_per_sec': elapsed_samples * world_size / elapsed_wct,
                'throughput/device/tokens_per_sec': elapsed_tokens / elapsed_wct,
            })

        model = state.model.module if state.is_model_ddp else state.model
        model_flops_per_batch = getattr(model, 'flops_per_batch', None)
        if callable(model_flops_per_batch):
            device_flops_per_batch = model_flops_per_batch(state.batch)
            flops_per_batch_tensor = state.device.tensor_to_device(
                torch.tensor(device_flops_per_batch, dtype=torch.float),
            )
            dist.all_reduce(flops_per_batch_tensor, reduce_operation='SUM')
            self.history_flops.append(flops_per_batch_tensor.item())

        if len(self.history_flops) == self.history_flops.maxlen:
            elapsed_flops = sum(self.history_flops) - self.history_flops[0]
            elapsed_wct = self.history_wct[-1] - self.history_wct[0]
            flops_per_sec = elapsed_flops / elapsed_wct
            device_flops_per_sec = flops_per_sec / dist.get_world_size()
            logger.log_metrics({'throughput/device/flops_per_sec': device_flops_per_sec})
            if self.gpu_flops_available:
                logger.log_metrics({'throughput/device/mfu': device_flops_per_sec / self.gpu_flops_available})

        logger.log_metrics({'time/train': state.timestamp.total_wct.total_seconds() / self.divider})
