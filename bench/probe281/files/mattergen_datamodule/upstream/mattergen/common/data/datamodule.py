# Copyright (c) Microsoft Corporation.
# Licensed under the MIT License.

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, Dataset

from mattergen.common.data.collate import collate
from mattergen.common.data.dataset import CrystalDataset
from mattergen.common.data.transform import Transform


@dataclass(frozen=True)
class BatchSize:
    train: int
    val: int
    test: int


@dataclass(frozen=True)
class NumWorkers:
    train: int
    val: int
    test: int


def worker_init_fn(id: int):
    """
    DataLoaders workers init function.

    Initialize the numpy.random seed correctly for each worker, so that
    random augmentations between workers and/or epochs are not identical.

    If a global seed is set, the augmentations are deterministic.

    https://pytorch.org/docs/stable/notes/randomness.html#dataloader
    """
    uint64_seed = torch.initial_seed()
    ss = np.random.SeedSequence([uint64_seed])
    # More than 128 bits (4 32-bit words) would be overkill.
    np.random.seed(ss.generate_state(4))
    # random.seed(uint64_seed)


class CrystDataModule(pl.LightningDataModule):
    def __init__(
        self,
        train_dataset: CrystalDataset,
        num_workers: NumWorkers,
        batch_size: BatchSize,
        val_dataset: CrystalDataset | None = None,
        test_dataset: CrystalDataset | None = None,
        transforms: Sequence[Transform] | None = None,
        average_density: float | None = None,
        max_epochs: int | None = None,
        **_,
    ):
        super().__init__()
        self.num_workers = num_workers
        self.batch_size = batch_size
        self.average_density = average_density
        self.max_epochs = max_epochs
        self.transforms = transforms

        self.train_dataset = train_dataset
        self.val_dataset = val_dataset
        self.test_dataset = test_dataset

        # Instantiate all datasets immediately
        self.setup()

    def prepare_data(self) -> None:
        # download only
        pass

    def setup(self, stage: str | None = None):
        """Datasets are built eagerly in __init__; nothing to do per stage."""
        return

    def _make_loader(self, dataset: Dataset, batch_size: int, num_workers: int, shuffle: bool) -> DataLoader:
        # host->device copies of the (small) ChemGraph batches overlap with the
        # forward pass when the batches come from pinned memory
        return DataLoader(
            dataset,
            shuffle=shuffle,
            batch_size=batch_size,
            num_workers=num_workers,
            worker_init_fn=worker_init_fn,
            collate_fn=collate,
            pin_memory=True,
            persistent_workers=num_workers > 0,
        )

    def train_dataloader(self, shuffle: bool = True) -> DataLoader:
        return self._make_loader(
            self.train_dataset, self.batch_size.train, self.num_workers.train, shuffle
        )

    def val_dataloader(self, shuffle: bool = False) -> DataLoader | None:
        if self.val_dataset is None:
            return None
        return self._make_loader(
            self.val_dataset, self.batch_size.val, self.num_workers.val, shuffle
        )

    def test_dataloader(self, shuffle: bool = False) -> DataLoader | None:
        if self.test_dataset is None:
            return None
        return self._make_loader(
            self.test_dataset, self.batch_size.test, self.num_workers.test, shuffle
        )

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}("
            f"train={len(self.train_dataset)}, "
            f"val={len(self.val_dataset) if self.val_dataset is not None else 0}, "
            f"test={len(self.test_dataset) if self.test_dataset is not None else 0}, "
            f"batch_size={self.batch_size})"
        )
