# Copyright 2021 UC Davis Plant AI and Biophysics Lab
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

"""Shared helpers for the AgML benchmark training scripts."""

import os
import logging
import subprocess

import torch
from pytorch_lightning.callbacks import Callback

logger = logging.getLogger('agml.experiments')


def gpus(given = None):
    """Returns the number of GPUs to train on.

    If `given` is provided it is returned unchanged; otherwise all visible
    CUDA devices are used (respecting `CUDA_VISIBLE_DEVICES`).
    """
    if given is not None:
        return given
    if torch.cuda.is_available():
        return torch.cuda.device_count()
    return 0


def accelerator():
    """The Lightning accelerator string for the current machine."""
    return 'gpu' if torch.cuda.is_available() else 'cpu'


def checkpoint_dir(checkpoint_dir = None, dataset = None):
    """Returns the directory in which checkpoints for `dataset` are saved."""
    if checkpoint_dir is None:
        if os.path.exists('/data2'):
            checkpoint_dir = os.path.join('/data2/amnjoshi/checkpoints')
        else:
            checkpoint_dir = os.path.join(os.getcwd(), 'checkpoints')
    if dataset is not None:
        checkpoint_dir = os.path.join(checkpoint_dir, dataset)
    os.makedirs(checkpoint_dir, exist_ok = True)
    return checkpoint_dir


def report_gpu_usage():
    """Prints a short summary of GPU memory usage (for the benchmark logs)."""
    try:
        out = subprocess.check_output(
            ['nvidia-smi', '--query-gpu=index,memory.used,memory.total',
             '--format=csv,noheader,nounits'], encoding = 'utf-8')
    except (FileNotFoundError, subprocess.CalledProcessError):
        logger.info("nvidia-smi not available; skipping GPU usage report.")
        return
    for line in out.strip().splitlines():
        idx, used, total = [s.strip() for s in line.split(',')]
        logger.info(f"GPU {idx}: {used} / {total} MiB")


class MetricLogger(Callback):
    """Logs training and validation metrics to a text file after each epoch."""

    def __init__(self, log_file):
        super().__init__()
        self.log_file = log_file
        if os.path.exists(self.log_file):
            os.remove(self.log_file)
        open(self.log_file, 'w').close()

    def _write(self, line):
        with open(self.log_file, 'a') as f:
            f.write(line + '\n')

    def on_train_epoch_end(self, trainer, pl_module):
        metrics = trainer.callback_metrics
        line = f"epoch {trainer.current_epoch}: " + ", ".join(
            f"{k}={float(v):.4f}" for k, v in metrics.items())
        self._write(line)

    def on_train_end(self, trainer, pl_module):
        self._write("training finished")
        report_gpu_usage()
