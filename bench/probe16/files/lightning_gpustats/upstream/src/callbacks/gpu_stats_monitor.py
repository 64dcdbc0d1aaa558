# Copyright The PyTorch Lightning team.
#
# Licensed under the Apache License, Version 2.0 (the "License");
"""
GPU Stats Monitor
=================

Monitor and logs GPU stats during training.
"""
import os
import shutil
import subprocess
import time
from typing import Any, Dict, List, Optional, Tuple

import torch

import lightning.pytorch as pl
from lightning.pytorch.callbacks.callback import Callback
from lightning.pytorch.utilities.exceptions import MisconfigurationException
from lightning.pytorch.utilities.rank_zero import rank_zero_only


class GPUStatsMonitor(Callback):
    r"""
    Automatically monitors and logs GPU stats during training stage. ``GPUStatsMonitor``
    is a callback and in order to use it you need to assign a logger in the ``Trainer``.

    Args:
        memory_utilization: Set to ``True`` to monitor used, free and percentage of memory
            utilization at the start and end of each step. Default: ``True``.
        gpu_utilization: Set to ``True`` to monitor percentage of GPU utilization
            at the start and end of each step. Default: ``True``.
        temperature: Set to ``True`` to monitor the memory and gpu temperature in degree Celsius.

    Raises:
        MisconfigurationException:
            If NVIDIA driver is not installed, not running on GPUs, or ``Trainer`` has no logger.

    Example::

        >>> from lightning.pytorch import Trainer
        >>> gpu_stats = GPUStatsMonitor() # doctest: +SKIP
        >>> trainer = Trainer(callbacks=[gpu_stats]) # doctest: +SKIP

    GPU stats are mainly based on `nvidia-smi --query-gpu` command. The description of the queries is as follows:

    - **fan.speed** – The fan speed value is the percent of maximum speed that the device's fan is currently
      intended to run at.
    - **memory.used** – Total memory allocated by active contexts.
    - **memory.free** – Total free memory.
    - **utilization.gpu** – Percent of time over the past sample period during which one or more kernels was
      executing on the GPU.
    - **temperature.gpu** – Core GPU temperature, in degrees C.
    """

    def __init__(
        self,
        memory_utilization: bool = True,
        gpu_utilization: bool = True,
        intra_step_time: bool = False,
        inter_step_time: bool = False,
        fan_speed: bool = False,
        temperature: bool = False,
    ):
        super().__init__()

        if shutil.which("nvidia-smi") is None:
            raise MisconfigurationException(
                "Cannot use GPUStatsMonitor callback because NVIDIA driver is not installed."
            )

        self._log_stats = dict(
            memory_utilization=memory_utilization,
            gpu_utilization=gpu_utilization,
            intra_step_time=intra_step_time,
            inter_step_time=inter_step_time,
            fan_speed=fan_speed,
            temperature=temperature,
        )
        self._snap_intra_step_time: Optional[float] = None
        self._snap_inter_step_time: Optional[float] = None

    def setup(self, trainer: "pl.Trainer", pl_module: "pl.LightningModule", stage: Optional[str] = None) -> None:
        if not trainer.loggers:
            raise MisconfigurationException("Cannot use GPUStatsMonitor callback with Trainer that has no logger.")

        if trainer.strategy.root_device.type != "cuda":
            raise MisconfigurationException(
                "You are using GPUStatsMonitor but are not running on GPU."
                f" The root device type is {trainer.strategy.root_device.type}."
            )

        self._gpu_ids = ",".join(str(d.index) for d in trainer.device_ids_as_devices)

    def on_train_epoch_start(self, trainer: "pl.Trainer", pl_module: "pl.LightningModule") -> None:
        self._snap_intra_step_time = None
        self._snap_inter_step_time = None

    @rank_zero_only
    def on_train_batch_start(self, trainer, pl_module, batch: Any, batch_idx: int) -> None:
        if self._log_stats["intra_step_time"]:
            self._snap_intra_step_time = time.time()
        if not trainer._logger_connector.should_update_logs:
            return
        gpu_stat_keys = self._get_gpu_stat_keys()
        gpu_stats = self._get_gpu_stats([k for k, _ in gpu_stat_keys])
        logs = self._parse_gpu_stats(self._gpu_ids, gpu_stats, gpu_stat_keys)
        if self._log_stats["inter_step_time"] and self._snap_inter_step_time:
            logs["batch_time/inter_step (ms)"] = (time.time() - self._snap_inter_step_time) * 1000
        for logger in trainer.loggers:
            logger.log_metrics(logs, step=trainer.fit_loop.epoch_loop._batches_that_stepped)

    @rank_zero_only
    def on_train_batch_end(self, trainer, pl_module, outputs, batch: Any, batch_idx: int) -> None:
        if self._log_stats["inter_step_time"]:
            self._snap_inter_step_time = time.time()
        if not trainer._logger_connector.should_update_logs:
            return
        gpu_stat_keys = self._get_gpu_stat_keys() + self._get_gpu_device_stat_keys()
        gpu_stats = self._get_gpu_stats([k for k, _ in gpu_stat_keys])
        logs = self._parse_gpu_stats(self._gpu_ids, gpu_stats, gpu_stat_keys)
        if self._log_stats["intra_step_time"] and self._snap_intra_step_time:
            logs["batch_time/intra_step (ms)"] = (time.time() - self._snap_intra_step_time) * 1000
        for logger in trainer.loggers:
            logger.log_metrics(logs, step=trainer.fit_loop.epoch_loop._batches_that_stepped)

    def _get_gpu_stats(self, queries: List[str]) -> List[List[float]]:
        """Run nvidia-smi to get the gpu stats."""
        gpu_query = ",".join(queries)
        format = "csv,nounits,noheader"
        gpu_ids = self._gpu_ids
        result = subprocess.run(
            [shutil.which("nvidia-smi"), f"--query-gpu={gpu_query}", f"--format={format}", f"--id={gpu_ids}"],
            encoding="utf-8",
            capture_output=True,
            check=True,
        )

        def _to_float(x: str) -> float:
            try:
                return float(x)
            except ValueError:
                return 0.0

        stats = [[_to_float(x) for x in s.split(", ")] for s in result.stdout.strip().split(os.linesep)]
        return stats

    @staticmethod
    def _parse_gpu_stats(device_ids: str, stats: List[List[float]], keys: List[Tuple[str, str]]) -> Dict[str, float]:
        logs = {}
        for i, device_id in enumerate(device_ids.split(",")):
            for j, (x, unit) in enumerate(keys):
                logs[f"device_id: {device_id}/{x} ({unit})"] = stats[i][j]
        return logs

    def _get_gpu_stat_keys(self) -> List[Tuple[str, str]]:
        stat_keys = []
        if self._log_stats["gpu_utilization"]:
            stat_keys.append(("utilization.gpu", "%"))
        if self._log_stats["memory_utilization"]:
            stat_keys.extend([("memory.used", "MB"), ("memory.free", "MB"), ("utilization.memory", "%")])
        return stat_keys

    def _get_gpu_device_stat_keys(self) -> List[Tuple[str, str]]:
        stat_keys = []
        if self._log_stats["fan_speed"]:
            stat_keys.append(("fan.speed", "%"))
        if self._log_stats["temperature"]:
            stat_keys.extend([("temperature.gpu", "°C"), ("temperature.memory", "°C")])
        return stat_keys
