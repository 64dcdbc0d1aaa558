# Copyright (c) 2024, NVIDIA CORPORATION.  All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""Lightning callbacks that open an Nsight Systems capture window and dump CUDA memory snapshots.

Use together with

    nsys profile -s none -t nvtx,cuda -o <path>/<name> --force-overwrite true \
        --capture-range=cudaProfilerApi --capture-range-end=stop python train.py ...

so that only the steps between `start_step` and `end_step` end up in the report.
"""
import os
from typing import List, Optional

import torch
from lightning.pytorch.callbacks.callback import Callback
from nemo.utils import logging
from nemo.utils.get_rank import get_rank


def get_current_epoch_step(trainer) -> int:
    """
    Get the value of step within an epoch.
    """
    return max(
        trainer.fit_loop.epoch_loop.automatic_optimization.optim_progress.optimizer.step.current.completed,
        trainer.fit_loop.epoch_loop.manual_optimization.optim_step_progress.current.completed,
    )


class NsysCallback(Callback):
    """
    A PyTorch Lightning callback for NVIDIA Nsight Systems (Nsys) profiling.

    This callback enables profiling of specific steps during training using NVIDIA Nsys.
    It allows for precise control over when profiling starts and ends, which ranks are profiled,
    and whether to generate detailed shape information.

    More info about nsys can be found [here](https://developer.nvidia.com/nsight-systems).

    Args:
        start_step (int): Global batch to start profiling
        end_step (int): Global batch to end profiling
        ranks (List[int]): Global rank IDs to profile
        gen_shape (bool): Generate model and kernel details including input shapes
        nvtx_ranges (bool): Insert NVTX ranges around forward/backward of each step

    Example:
        >>> callback = NsysCallback(start_step=100, end_step=200, ranks=[0, 1], gen_shape=True)
        >>> trainer = Trainer(callbacks=[callback])
    """

    def __init__(self, start_step: int, end_step: int, ranks: List[int] = [0], gen_shape: bool = False,
                 nvtx_ranges: bool = False):
        assert type(start_step) is int, f"Nsys start_step must be of type int. Found: {type(start_step)}"
        self._nsys_profile_start_step = start_step

        assert type(end_step) is int, f"Nsys end_step must be of type int. Found: {type(start_step)}"
        self._nsys_profile_end_step = end_step

        assert (self._nsys_profile_end_step >= self._nsys_profile_start_step), \
            "Nsys end_step must be greater than or equal to nsys start_step"

        self._nsys_profile_ranks = ranks
        self._nsys_profile_gen_shape = gen_shape
        self._nvtx_ranges = nvtx_ranges
        self._emit_nvtx = None

        logging.info(
            f"Nsys profiling setup with start_step: {self._nsys_profile_start_step},"
            f"and end_step: {self._nsys_profile_end_step}"
        )

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx: int) -> Optional[int]:
        """PyTorch Lightning hook:
        https://pytorch-lightning.readthedocs.io/en/stable/common/lightning_module.html#on-train-batch-start
        We use it here to enable nsys profiling.
        """

        device = trainer.strategy.root_device
        current_step = get_current_epoch_step(trainer)
        if device.type == "cuda":
            if current_step == self._nsys_profile_start_step and get_rank() in self._nsys_profile_ranks:
                logging.info("====== Start nsys profiling ======")
                torch.cuda.cudart().cudaProfilerStart()
                if self._nsys_profile_gen_shape:
                    self._emit_nvtx = torch.autograd.profiler.emit_nvtx(record_shapes=True)
                    self._emit_nvtx.__enter__()
            if self._nvtx_ranges and get_rank() in self._nsys_profile_ranks:
                torch.cuda.nvtx.range_push(f"step_{current_step}")

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx: int) -> None:
        """PyTorch Lightning hook:
        https://pytorch-lightning.readthedocs.io/en/stable/common/lightning_module.html#on-train-batch-end
        We use it here to enable nsys profiling.
        """

        device = trainer.strategy.root_device
        current_step = get_current_epoch_step(trainer)
        if device.type == "cuda":  # mirror of on_train_batch_start
            if self._nvtx_ranges and get_rank() in self._nsys_profile_ranks:
                torch.cuda.nvtx.range_pop()
            if current_step == self._nsys_profile_end_step and get_rank() in self._nsys_profile_ranks:
                logging.info("====== End nsys profiling ======")
                torch.cuda.cudart().cudaProfilerStop()
                if self._emit_nvtx is not None:
                    self._emit_nvtx.__exit__(None, None, None)
                    self._emit_nvtx = None


class MemoryProfileCallback(Callback):
    """
    This callback enables recording a timeline of memory allocations during training.
    The generated .pickle profiles can be analyzed at https://pytorch.org/memory_viz

    More info about the profiles can be found [here](https://pytorch.org/blog/understanding-gpu-memory-1/).

    Args:
        dir (Optional[str]): Directory to store the memory profile dump
        warn_cycles (Optional[bool]): Whether to enable [reference cycle detection]
        ranks (Optional[list[int]]): List of ranks to collect snapshot on, defaults to all if list is empty
    """

    def __init__(self, dir: str = "/mem_profile", warn_cycles: bool = True, ranks: List[int] = [],
                 max_entries: int = 100000):
        self.dir = dir
        self.ranks = ranks
        self.max_entries = max_entries

        os.makedirs(self.dir, exist_ok=True)
        logging.info(f"Torch memory profiles will be written to: {self.dir}")

        if warn_cycles:
            logging.info("Enabling reference cycle detector")
            from torch.utils.viz._cycles import warn_tensor_cycles

            warn_tensor_cycles()

    def enable_on_rank(self) -> bool:
        if not self.ranks:
            return True
        return get_rank() in self.ranks

    def setup(self, trainer, pl_module, stage) -> None:
        """PyTorch Lightning hook:
        https://lightning.ai/docs/pytorch/stable/api/lightning.pytorch.callbacks.Callback.html#lightning.pytorch.callbacks.Callback.on_train_end
        We use it here to start recording the memory profiler.
        """

        if torch.distributed.is_initialized() and self.enable_on_rank():
            torch.cuda.memory._record_memory_history(max_entries=self.max_entries)

    def on_train_end(self, trainer, pl_module) -> None:
        """PyTorch Lightning hook:
        https://lightning.ai/docs/pytorch/stable/api/lightning.pytorch.callbacks.Callback.html#lightning.pytorch.callbacks.Callback.on_train_end
        We use it here to finish memory profiling and write the snapshot.
        """

        logging.info(
            f"on_train_batch_end rank: {torch.distributed.get_rank()} mem: "
            f"{torch.cuda.memory_allocated() / 1024 / 1024 / 1024} / "
            f"{torch.cuda.max_memory_reserved() / 1024 / 1024 / 1024}"
        )

        if torch.distributed.is_initialized() and self.enable_on_rank():
            rank = get_rank()
            _snapshot_path = f"{self.dir}/memory_snapshot-rank{rank}.pickle"
            logging.info(f"Writing memory profile snapshot to {_snapshot_path}")
            torch.cuda.memory._dump_snapshot(f"{_snapshot_path}")
            torch.cuda.memory._record_memory_history(enabled=None)
            logging.info(f"Finished writing memory profile snapshot: {_snapshot_path}")
