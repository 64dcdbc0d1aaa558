"""
This example shows how to interact with the Determined PyTorch interface to
build a basic MNIST network.

In the `__init__` method, the model and optimizer are wrapped with `wrap_model`
and `wrap_optimizer`. This model is single-input and single-output.

The methods `train_batch` and `evaluate_batch` define the forward pass
for training and evaluation respectively.

Determined places the model on the GPU of the slot it was given; batches
arrive already on that device. Mixed precision (when the ``mixed_precision``
hyperparameter is on) uses native torch AMP through ``wrap_scaler``.
"""

import logging
import os
from typing import Any, Dict, Sequence, Tuple, Union, cast

import torch
from torch import nn

import time

import data
from determined.pytorch import DataLoader, PyTorchCallback, PyTorchTrial, PyTorchTrialContext
from layers import Flatten

TorchData = Union[Dict[str, torch.Tensor], Sequence[torch.Tensor], torch.Tensor]


class EpochTimer(PyTorchCallback):
    """Logs wall-clock time per training epoch and, on GPU slots, the peak memory.

    The searcher compares trials by validation loss only; the timing ends up in
    the trial logs so we can spot configs that are slow for no accuracy gain.
    """

    def __init__(self, context: PyTorchTrialContext) -> None:
        self.context = context
        self._t0 = None

    def on_training_epoch_start(self, epoch_idx: int) -> None:
        if torch.cuda.is_available():
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        self._t0 = time.time()

    def on_training_epoch_end(self, epoch_idx: int) -> None:
        if self._t0 is None:
            return
        peak = float("nan")
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.synchronize(self.context.device)
            peak = torch.cuda.max_memory_allocated(self.context.device) / 2 ** 20
        logging.info(
            "rank %d epoch %d took %.1fs, peak device memory %.0f MiB",
            self.context.distributed.get_rank(), epoch_idx, time.time() - self._t0, peak,
        )


class MNistTrial(PyTorchTrial):
    def __init__(self, context: PyTorchTrialContext) -> None:
        self.context = context

        # Create a unique download directory for each rank so they don't overwrite each
        # other when doing distributed training.
        self.download_directory = f"/tmp/data-rank{self.context.distributed.get_rank()}"
        self.data_downloaded = False

        self.model = self.context.wrap_model(
            nn.Sequential(
                nn.Conv2d(1, self.context.get_hparam("n_filters1"), 3, 1),
                nn.ReLU(),
                nn.Conv2d(
                    self.context.get_hparam("n_filters1"),
                    self.context.get_hparam("n_filters2"),
                    3,
                ),
                nn.ReLU(),
                nn.MaxPool2d(2),
                nn.Dropout2d(self.context.get_hparam("dropout1")),
                Flatten(),
                nn.Linear(144 * self.context.get_hparam("n_filters2"), 128),
                nn.ReLU(),
                nn.Dropout2d(self.context.get_hparam("dropout2")),
                nn.Linear(128, 10),
                nn.LogSoftmax(),
            )
        )

        self.optimizer = self.context.wrap_optimizer(
            torch.optim.Adadelta(
                self.model.parameters(), lr=self.context.get_hparam("learning_rate")
            )
        )

        self.use_amp = bool(self.context.get_hparam("mixed_precision"))
        if self.use_amp:
            self.scaler = self.context.wrap_scaler(torch.cuda.amp.GradScaler())
        logging.info("trial running on %s (amp=%s)", self.context.device, self.use_amp)

    def build_callbacks(self) -> Dict[str, PyTorchCallback]:
        return {"epoch_timer": EpochTimer(self.context)}

    def build_training_data_loader(self) -> DataLoader:
        if not self.data_downloaded:
            self.download_directory = data.download_dataset(
                download_directory=self.download_directory,
                data_config=self.context.get_data_config(),
            )
            self.data_downloaded = True

        train_data = data.get_dataset(self.download_directory, train=True)
        return DataLoader(train_data, batch_size=self.context.get_per_slot_batch_size(),
                          pin_memory=True, num_workers=2)

    def build_validation_data_loader(self) -> DataLoader:
        if not self.data_downloaded:
            self.download_directory = data.download_dataset(
                download_directory=self.download_directory,
                data_config=self.context.get_data_config(),
            )
            self.data_downloaded = True

        validation_data = data.get_dataset(self.download_directory, train=False)
        return DataLoader(validation_data, batch_size=self.context.get_per_slot_batch_size(),
                          pin_memory=True)

    def train_batch(
        self, batch: TorchData, epoch_idx: int, batch_idx: int
    ) -> Dict[str, torch.Tensor]:
        batch = cast(Tuple[torch.Tensor, torch.Tensor], batch)
        data, labels = batch

        with torch.cuda.amp.autocast(enabled=self.use_amp):
            output = self.model(data)
            loss = torch.nn.functional.nll_loss(output, labels)

        self.context.backward(loss)
        self.context.step_optimizer(self.optimizer, scaler=self.scaler if self.use_amp else None)

        metrics = {"loss": loss}
        if batch_idx % 100 == 0 and torch.cuda.is_available():
            metrics["gpu_mem_mb"] = torch.cuda.memory_allocated() / 2 ** 20
        return metrics

    def evaluate_batch(self, batch: TorchData) -> Dict[str, Any]:
        batch = cast(Tuple[torch.Tensor, torch.Tensor], batch)
        data, labels = batch

        output = self.model(data)
        validation_loss = torch.nn.functional.nll_loss(output, labels).item()

        pred = output.argmax(dim=1, keepdim=True)
        accuracy = pred.eq(labels.view_as(pred)).sum().item() / len(data)

        return {"validation_loss": validation_loss, "accuracy": accuracy}
