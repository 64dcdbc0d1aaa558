"""Base classes for all :mod:`torchgeo` data modules."""

import os
from collections.abc import Callable
from typing import Any, Optional, Union

import kornia.augmentation as K
import torch
from lightning import LightningDataModule
from torch import Tensor
from torch.utils.data import DataLoader, Dataset, default_collate

from ..datasets import GeoDataset, NonGeoDataset, stack_samples
from ..samplers import (
    BatchGeoSampler,
    GeoSampler,
    GridGeoSampler,
    RandomBatchGeoSampler,
)
from ..transforms import AugmentationSequential
from .utils import MisconfigurationException


def _default_num_workers() -> int:
    """Split host CPUs evenly between the data loaders of every local GPU rank."""
    cpus = os.cpu_count() or 1
    local_gpus = max(1, torch.cuda.device_count())
    return max(0, cpus // local_gpus - 1)


class BaseDataModule(LightningDataModule):
    """Base class for all TorchGeo data modules."""

    mean = torch.tensor(0)
    std = torch.tensor(255)

    def __init__(
        self,
        dataset_class: type[Dataset[dict[str, Tensor]]],
        batch_size: int = 1,
        num_workers: Optional[int] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__()

        self.dataset_class = dataset_class
        self.batch_size = batch_size
        self.num_workers = _default_num_workers() if num_workers is None else num_workers
        self.kwargs = kwargs

        self.train_dataset: Optional[Dataset[dict[str, Tensor]]] = None
        self.val_dataset: Optional[Dataset[dict[str, Tensor]]] = None
        self.test_dataset: Optional[Dataset[dict[str, Tensor]]] = None
        self.predict_dataset: Optional[Dataset[dict[str, Tensor]]] = None

        self.aug: Optional[Any] = AugmentationSequential(
            K.Normalize(mean=self.mean, std=self.std), data_keys=["image"]
        )
        self.train_aug: Optional[Any] = None
        self.val_aug: Optional[Any] = None
        self.test_aug: Optional[Any] = None
        self.predict_aug: Optional[Any] = None

        self.collate_fn = default_collate

    def prepare_data(self) -> None:
        if self.kwargs.get("download", False):
            self.dataset_class(**self.kwargs)

    def _valid_attribute(self, *args: str) -> Any:
        for arg in args:
            obj = getattr(self, arg)
            if obj is None:
                continue
            if not obj:
                msg = f"{self.__class__.__name__}.{arg} has length 0."
                raise MisconfigurationException(msg)
            return obj
        msg = f"{self.__class__.__name__}.setup does not define a '{args[0]}'"
        raise MisconfigurationException(msg)

    def transfer_batch_to_device(
        self, batch: dict[str, Tensor], device: torch.device, dataloader_idx: int
    ) -> dict[str, Tensor]:
        # non_blocking copies only help when the source is pinned host memory
        non_blocking = device.type == "cuda"
        for key, value in batch.items():
            if isinstance(value, Tensor):
                batch[key] = value.to(device, non_blocking=non_blocking)
        return batch

    def on_after_batch_transfer(
        self, batch: dict[str, Tensor], dataloader_idx: int
    ) -> dict[str, Tensor]:
        if self.trainer:
            if self.trainer.training:
                split = "train"
            elif self.trainer.validating or self.trainer.sanity_checking:
                split = "val"
            elif self.trainer.testing:
                split = "test"
            elif self.trainer.predicting:
                split = "predict"

            aug = self._valid_attribute(f"{split}_aug", "aug")
            batch = aug(batch)

        return batch

    def plot(self, *args: Any, **kwargs: Any) -> Any:
        dataset = self.dataset or self.val_dataset
        if dataset is not None:
            if hasattr(dataset, "plot"):
                return dataset.plot(*args, **kwargs)


class GeoDataModule(BaseDataModule):
    """Base class for data modules containing geospatial information."""

    def __init__(
        self,
        dataset_class: type[GeoDataset],
        batch_size: int = 1,
        patch_size: Union[tuple[int, int], int] = 64,
        length: Optional[int] = None,
        num_workers: Optional[int] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(dataset_class, batch_size, num_workers, **kwargs)

        self.patch_size = patch_size
        self.length = length

        self.train_sampler: Optional[GeoSampler] = None
        self.val_sampler: Optional[GeoSampler] = None
        self.test_sampler: Optional[GeoSampler] = None
        self.predict_sampler: Optional[GeoSampler] = None

        self.train_batch_sampler: Optional[BatchGeoSampler] = None
        self.val_batch_sampler: Optional[BatchGeoSampler] = None
        self.test_batch_sampler: Optional[BatchGeoSampler] = None
        self.predict_batch_sampler: Optional[BatchGeoSampler] = None

        self.collate_fn = stack_samples

    def setup(self, stage: str) -> None:
        if stage in ["fit"]:
            self.train_dataset = self.dataset_class(split="train", **self.kwargs)
            self.train_batch_sampler = RandomBatchGeoSampler(
                self.train_dataset, self.patch_size, self.batch_size, self.length
            )
        if stage in ["fit", "validate"]:
            self.val_dataset = self.dataset_class(split="val", **self.kwargs)
            self.val_sampler = GridGeoSampler(
                self.val_dataset, self.patch_size, self.patch_size
            )
        if stage in ["test"]:
            self.test_dataset = self.dataset_class(split="test", **self.kwargs)
            self.test_sampler = GridGeoSampler(
                self.test_dataset, self.patch_size, self.patch_size
            )

    def _dataloader_factory(self, split: str) -> DataLoader[dict[str, Tensor]]:
        dataset = self._valid_attribute(f"{split}_dataset", "dataset")
        sampler = self._valid_attribute(
            f"{split}_batch_sampler", f"{split}_sampler", "batch_sampler", "sampler"
        )
        batch_size = self._valid_attribute(f"{split}_batch_size", "batch_size")

        if isinstance(sampler, BatchGeoSampler):
            batch_size = 1
            batch_sampler = sampler
            sampler = None
        else:
            batch_sampler = None

        return DataLoader(
            dataset=dataset,
            batch_size=batch_size,
            sampler=sampler,
            batch_sampler=batch_sampler,
            num_workers=self.num_workers,
            collate_fn=self.collate_fn,
            pin_memory=True,
            persistent_workers=self.num_workers > 0,
        )

    def train_dataloader(self) -> DataLoader[dict[str, Tensor]]:
        return self._dataloader_factory("train")

    def val_dataloader(self) -> DataLoader[dict[str, Tensor]]:
        return self._dataloader_factory("val")

    def test_dataloader(self) -> DataLoader[dict[str, Tensor]]:
        return self._dataloader_factory("test")

    def predict_dataloader(self) -> DataLoader[dict[str, Tensor]]:
        return self._dataloader_factory("predict")


class NonGeoDataModule(BaseDataModule):
    """Base class for data modules lacking geospatial information."""

    def __init__(
        self,
        dataset_class: type[NonGeoDataset],
        batch_size: int = 1,
        num_workers: Optional[int] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(dataset_class, batch_size, num_workers, **kwargs)

    def setup(self, stage: str) -> None:
        if stage in ["fit"]:
            self.train_dataset = self.dataset_class(split="train", **self.kwargs)
        if stage in ["fit", "validate"]:
            self.val_dataset = self.dataset_class(split="val", **self.kwargs)
        if stage in ["test"]:
            self.test_dataset = self.dataset_class(split="test", **self.kwargs)

    def _dataloader_factory(self, split: str) -> DataLoader[dict[str, Tensor]]:
        dataset = self._valid_attribute(f"{split}_dataset", "dataset")
        batch_size = self._valid_attribute(f"{split}_batch_size", "batch_size")
        return DataLoader(
            dataset=dataset,
            batch_size=batch_size,
            shuffle=split == "train",
            num_workers=self.num_workers,
            collate_fn=self.collate_fn,
            pin_memory=torch.cuda.is_available(),
            persistent_workers=self.num_workers > 0,
        )

    def train_dataloader(self) -> DataLoader[dict[str, Tensor]]:
        return self._dataloader_factory("train")

    def val_dataloader(self) -> DataLoader[dict[str, Tensor]]:
        return self._dataloader_factory("val")

    def test_dataloader(self) -> DataLoader[dict[str, Tensor]]:
        return self._dataloader_factory("test")
