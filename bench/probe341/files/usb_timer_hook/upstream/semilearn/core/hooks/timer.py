# Copyright (c) Microsoft Corporation.
# Licensed under the MIT License.

import time

import torch

from .hook import Hook


class TimerHook(Hook):
    """
    Timer Hook

    Measures data-loading ("prefetch") time and the GPU run time of every
    training step with CUDA events, so the numbers are not distorted by the
    asynchronous kernel launches.
    """

    def __init__(self, sync_every_step=True):
        super().__init__()
        self.sync_every_step = sync_every_step
        self.wall_start = None

    def before_run(self, algorithm):
        algorithm.start_batch = torch.cuda.Event(enable_timing=True)
        algorithm.end_batch = torch.cuda.Event(enable_timing=True)

        algorithm.start_run = torch.cuda.Event(enable_timing=True)
        algorithm.end_run = torch.cuda.Event(enable_timing=True)
        algorithm.start_batch.record()
        self.wall_start = time.time()

    def before_train_step(self, algorithm):
        algorithm.end_batch.record()
        if self.sync_every_step:
            torch.cuda.synchronize()
        algorithm.start_run.record()

    def after_train_step(self, algorithm):
        algorithm.end_run.record()
        if self.sync_every_step:
            torch.cuda.synchronize(algorithm.gpu)

        algorithm.log_dict['lr'] = algorithm.optimizer.param_groups[-1]['lr']
        algorithm.log_dict['train/prefecth_time'] = algorithm.start_batch.elapsed_time(algorithm.end_batch) / 1000.
        algorithm.log_dict['train/run_time'] = algorithm.start_run.elapsed_time(algorithm.end_run) / 1000.
        algorithm.start_batch.record()

    def after_run(self, algorithm):
        if self.wall_start is None:
            return
        elapsed = time.time() - self.wall_start
        algorithm.print_fn(f"total wall-clock training time: {elapsed / 3600.:.2f} h")
