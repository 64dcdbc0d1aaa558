# Copyright 2022 MosaicML Composer authors
# SPDX-License-Identifier: Apache-2.0

"""Log memory usage during training."""
import logging
import math
import warnings
from typing import Dict, Optional, Union

import torch
import torch.cuda
from torch import distributed

from composer.core import Callback, State
from composer.loggers import Logger
from composer.utils import dist

log = logging.getLogger(__name__)

__all__ = ['MemoryMonitor']


class MemoryMonitor(Callback):
    """Logs the memory usage of the model.

    This callback calls the torch memory stats API for CUDA (see :func:`torch.cuda.memory_stats`)
    on the :attr:`.Event.AFTER_TRAIN_BATCH` and reports different memory statistics.

    Example:
        .. doctest::

            >>> from composer import Trainer
            >>> from composer.callbacks import MemoryMonitor
            >>> # constructing trainer object with this callback
            >>> trainer = Trainer(
            ...     model=model,
            ...     train_dataloader=train_dataloader,
            ...     eval_dataloader=eval_dataloader,
            ...     optimizers=optimizer,
            ...     max_duration="1ep",
            ...     callbacks=[MemoryMonitor()],
            ... )

    +----------------+-----------------------------------------------------------------------------------+
    | Key            | Logged data                                                                       |
    +================+===================================================================================+
    |                | Several memory usage statistics                                                   |
    | ``memory/{statistic}`` | are logged on                                                             |
    |                | :attr:`.Event.AFTER_TRAIN_BATCH` event.                                           |
    +----------------+-----------------------------------------------------------------------------------+

    .. note::
        Memory usage monitoring is only supported for the GPU devices.

    Args:
        memory_keys (Dict[str, str], optional): A dict specifying memory statistics to log.
        dist_aggregate_batch_interval (int, optional): interval for aggregating memory stats across
            all nodes. Defaults to None (by default the functionality is disabled).
    """

    def __init__(
        self,
        memory_keys: Optional[Dict[str, str]] = None,
        dist_aggregate_batch_interval: Optional[int] = None,
    ) -> None:
        self.memory_keys = memory_keys
        self.dist_aggregate_batch_interval = dist_aggregate_batch_interval

    def init(self, state: State, logger: Logger) -> None:
        # Not relying on `torch.cuda.is_available()` since the model could be on CPU.
        model_device = next(state.model.parameters()).device

        if model_device.type not in ('cuda', 'meta'):
            warnings.warn(f'The memory monitor only works on CUDA devices, but the model is on {model_device.type}.')

    def after_train_batch(self, state: State, logger: Logger):
        memory_report = {}

        model_device = next(state.model.parameters()).device
        if model_device.type != 'cuda':
            return

        memory_report = _get_memory_report(self.memory_keys)
        if self.dist_aggregate_batch_interval is not None and state.timestamp.batch.value % self.dist_aggregate_batch_interval == 0:
            dist_memory_report = {}
            for (mem_stat, val) in memory_report.items():
                key = mem_stat + '_avg'
                dist_memory_report[key] = _dist_reduce(val, 'avg', model_device)
                key = mem_stat + '_max'
                dist_memory_report[key] = _dist_reduce(val, 'max', model_device)
            memory_report.update(dist_memory_report)

        logger.log_metrics({f'memory/{mem_stat}': val for (mem_stat, val) in memory_report.items()})


_MEMORY_KEYS = {
    'allocated_bytes.all.current': 'current_allocated_mem',
    'active_bytes.all.current': 'current_active_mem',
    'inactive_split_bytes.all.current': 'current_inactive_mem',
    'reserved_bytes.all.current': 'current_reserved_mem',
    'num_alloc_retries': 'alloc_retries',
}


def _dist_reduce(val: float, reduce_op: str, device: torch.device):
    tensor = torch.tensor(val, device=device)
    if reduce_op == 'avg':
        dist.all_reduce(tensor, reduce_operation='SUM')
        return tensor.item() / dist.get_world_size()
    dist.all_reduce(tensor, reduce_operation='MAX')
    return tensor.item()


def _get_memory_report(memory_keys: Optional[Dict[str, str]] = None) -> Dict[str, Union[int, float]]:
    memory_stats = torch.cuda.memory_stats()
    memory_keys = memory_keys or _MEMORY_KEYS

    # simplify and reformat the memory_stats
    memory_report = {}
    for (torch_name, name) in memory_keys.items():
        if torch_name in memory_stats:
            # Convert to gigabytes
            if 'bytes' in torch_name:
                gigabytes = memory_stats[torch_name] / 1.0e9
                # Round to preserve 5 significant digits
                if gigabytes != 0:
                    order_of_magnitude = int(math.floor(math.log10(abs(gigabytes))))
                    gigabytes = round(gigabytes, -order_of_magnitude + 4)
                memory_report[name.replace('_mem', '_gigabytes')] = gigabytes
            else:
                memory_report[name] = memory_stats[torch_name]

    memory_report['peak_allocated_mem'] = torch.cuda.max_memory_allocated() / 1.0e9
    memory_report['peak_reserved_mem'] = torch.cuda.max_memory_reserved() / 1.0e9
    _, total_mem = torch.cuda.mem_get_info()
    memory_report['total_mem'] = total_mem / 1.0e9
    torch.cuda.reset_peak_memory_stats()

    return memory_report
