from functools import partial
from typing import Any, Dict, Optional, Union

import math
import pytorch_lightning as pl
from omegaconf import DictConfig
from torch.utils.data import DataLoader, Dataset

from data.genx_utils.collate import custom_collate_rnd, custom_collate_streaming
from data.genx_utils.dataset_rnd import build_random_access_dataset, get_weighted_random_sampler, CustomConcatDataset
from data.genx_utils.dataset_streaming import build_streaming_dataset
from data.utils.spatial import get_dataloading_hw
from data.utils.types import DatasetMode, DatasetSamplingMode


def get_dataloader_kwargs(dataset: Union[Dataset, CustomConcatDataset],
                          sampling_mode: DatasetSamplingMode,
                          dataset_mode: DatasetMode,
                          dataset_config: DictConfig,
                          batch_size: int,
                          num_workers: int) -> Dict[str, Any]:
    if dataset_mode == DatasetMode.TRAIN:
        if sampling_mode == DatasetSamplingMode.STREAM:
            return dict(
                dataset=dataset,
                batch_size=None,
                shuffle=False,  # Done already in the streaming datapipe
                num_workers=num_workers,
                pin_memory=False,
                drop_last=False,  # Cannot be done with streaming datapipes
                collate_fn=custom_collate_streaming,
            )
        if sampling_mode == DatasetSamplingMode.RANDOM:
            use_weighted_rnd_sampling = dataset_config.train.random.weighted_sampling
            sampler = get_weighted_random_sampler(dataset) if use_weighted_rnd_sampling else None
            return dict(
                dataset=dataset,
                batch_size=batch_size,
                shuffle=sampler is None,
                sampler=sampler,
                num_workers=num_workers,
                pin_memory=True,
                drop_last=True,  # Maintain the same batch size for logging
                collate_fn=custom_collate_rnd,
            )
        raise NotImplementedError
    elif dataset_mode in (DatasetMode.VALIDATION, DatasetMode.TESTING):
        if sampling_mode == DatasetSamplingMode.STREAM:
            return dict(
                dataset=dataset,
                batch_size=None,
                shuffle=False,
                num_workers=num_workers,
                pin_memory=False,
                drop_last=False,  # Cannot be done with streaming datapipes
                collate_fn=custom_collate_streaming,
            )
        if sampling_mode == DatasetSamplingMode.RANDOM:
            return dict(
                dataset=dataset,
                batch_size=batch_size,
                shuffle=False,
                num_workers=num_workers,
                pin_memory=False,
                drop_last=True,  # Maintain the same batch size for logging
                collate_fn=custom_collate_rnd,
            )
        raise NotImplementedError
    raise NotImplementedError


class DataModule(pl.LightningDataModule):
    def __init__(self,
                 dataset_config: DictConfig,
                 num_workers_train: int,
                 num_workers_eval: int,
                 batch_size_train: int,
                 batch_size_eval: int):
        super().__init__()
        assert num_workers_train >= 0
        assert num_workers_eval >= 0
        assert batch_size_train >= 1
        assert batch_size_eval >= 1

        self.dataset_config = dataset_config
        self.train_sampling_mode = dataset_config.train.sampling
        self.eval_sampling_mode = dataset_config.eval.sampling

        assert self.train_sampling_mode in iter(DatasetSamplingMode)
        assert self.eval_sampling_mode in (DatasetSamplingMode.STREAM, DatasetSamplingMode.RANDOM)

        # In mixed sampling mode, the batch size is split between the two sampling modes.
        if self.train_sampling_mode == DatasetSamplingMode.MIXED:
            self.build_train_dataset = partial(build_random_access_dataset, dataset_config=self.dataset_config)
            self.build_train_dataset_stream = partial(build_streaming_dataset, dataset_config=self.dataset_config)
            self.mixed_w_stream = dataset_config.train.mixed.w_stream
            self.mixed_w_random = dataset_config.train.mixed.w_random
            self.mixed_bs_random = max(1, math.floor(batch_size_train * self.mixed_w_random /
                                                     (self.mixed_w_stream + self.mixed_w_random)))
            self.mixed_bs_stream = max(1, batch_size_train - self.mixed_bs_random)
            self.mixed_nw_random = max(1, math.floor(num_workers_train * self.mixed_w_random /
                                                     (self.mixed_w_stream + self.mixed_w_random)))
            self.mixed_nw_stream = max(0, num_workers_train - self.mixed_nw_random)
            print(f'[Train] Local batch size for:\nstream sampling:\t{self.mixed_bs_stream}\n'
                  f'random sampling:\t{self.mixed_bs_random}')
            print(f'[Train] Local num workers for:\nstream sampling:\t{self.mixed_nw_stream}\n'
                  f'random sampling:\t{self.mixed_nw_random}')
        elif self.train_sampling_mode == DatasetSamplingMode.RANDOM:
            self.build_train_dataset = partial(build_random_access_dataset, dataset_config=self.dataset_config)
        else:
            self.build_train_dataset = partial(build_streaming_dataset, dataset_config=self.dataset_config)

        self.build_eval_dataset = partial(build_streaming_dataset, dataset_config=self.dataset_config) \
            if self.eval_sampling_mode == DatasetSamplingMode.STREAM else \
            partial(build_random_access_dataset, dataset_config=self.dataset_config)

        self.sampling_mode_2_dataset = dict()
        self.sampling_mode_2_train_workers = dict()
        self.sampling_mode_2_train_batch_size = dict()
        self.validation_dataset = None
        self.test_dataset = None

        self.overall_batch_size_train = batch_size_train
        self.overall_batch_size_eval = batch_size_eval
        self.overall_num_workers_train = num_workers_train
        self.overall_num_workers_eval = num_workers_eval

    def get_dataloading_hw(self):
        return get_dataloading_hw(dataset_config=self.dataset_config)

    def setup(self, stage: Optional[str] = None) -> None:
        if stage == 'fit':
            if self.train_sampling_mode == DatasetSamplingMode.MIXED:
                self.sampling_mode_2_dataset[DatasetSamplingMode.RANDOM] = \
                    self.build_train_dataset(dataset_mode=DatasetMode.TRAIN)
                self.sampling_mode_2_dataset[DatasetSamplingMode.STREAM] = \
                    self.build_train_dataset_stream(dataset_mode=DatasetMode.TRAIN,
                                                    batch_size=self.mixed_bs_stream,
                                                    num_workers=self.mixed_nw_stream)
                self.sampling_mode_2_train_workers[DatasetSamplingMode.RANDOM] = self.mixed_nw_random
                self.sampling_mode_2_train_workers[DatasetSamplingMode.STREAM] = self.mixed_nw_stream
                self.sampling_mode_2_train_batch_size[DatasetSamplingMode.RANDOM] = self.mixed_bs_random
                self.sampling_mode_2_train_batch_size[DatasetSamplingMode.STREAM] = self.mixed_bs_stream
            elif self.train_sampling_mode == DatasetSamplingMode.RANDOM:
                self.sampling_mode_2_dataset[DatasetSamplingMode.RANDOM] = \
                    self.build_train_dataset(dataset_mode=DatasetMode.TRAIN)
                self.sampling_mode_2_train_workers[DatasetSamplingMode.RANDOM] = self.overall_num_workers_train
                self.sampling_mode_2_train_batch_size[DatasetSamplingMode.RANDOM] = self.overall_batch_size_train
            else:
                self.sampling_mode_2_dataset[DatasetSamplingMode.STREAM] = \
                    self.build_train_dataset(dataset_mode=DatasetMode.TRAIN,
                                             batch_size=self.overall_batch_size_train,
                                             num_workers=self.overall_num_workers_train)
                self.sampling_mode_2_train_workers[DatasetSamplingMode.STREAM] = self.overall_num_workers_train
                self.sampling_mode_2_train_batch_size[DatasetSamplingMode.STREAM] = self.overall_batch_size_train

            self.validation_dataset = self.build_eval_dataset(dataset_mode=DatasetMode.VALIDATION,
                                                              batch_size=self.overall_batch_size_eval,
                                                              num_workers=self.overall_num_workers_eval)
        elif stage == 'validate':
            self.validation_dataset = self.build_eval_dataset(dataset_mode=DatasetMode.VALIDATION,
                                                              batch_size=self.overall_batch_size_eval,
                                                              num_workers=self.overall_num_workers_eval)
        elif stage == 'test':
            self.test_dataset = self.build_eval_dataset(dataset_mode=DatasetMode.TESTING,
                                                        batch_size=self.overall_batch_size_eval,
                                                        num_workers=self.overall_num_workers_eval)
        else:
            raise NotImplementedError

    def train_dataloader(self):
        train_loaders = dict()
        for sampling_mode, dataset in self.sampling_mode_2_dataset.items():
            train_loaders[sampling_mode] = DataLoader(
                **get_dataloader_kwargs(dataset=dataset, sampling_mode=sampling_mode, dataset_mode=DatasetMode.TRAIN,
                                        dataset_config=self.dataset_config,
                                        batch_size=self.sampling_mode_2_train_batch_size[sampling_mode],
                                        num_workers=self.sampling_mode_2_train_workers[sampling_mode]))
        if len(train_loaders) == 1:
            train_loaders = next(iter(train_loaders.values()))
        assert len(train_loaders) > 0
        return train_loaders

    def val_dataloader(self):
        return DataLoader(**get_dataloader_kwargs(
            dataset=self.validation_dataset, sampling_mode=self.eval_sampling_mode, dataset_mode=DatasetMode.VALIDATION,
            dataset_config=self.dataset_config, batch_size=self.overall_batch_size_eval,
            num_workers=self.overall_num_workers_eval))

    def test_dataloader(self):
        return DataLoader(**get_dataloader_kwargs(
            dataset=self.test_dataset, sampling_mode=self.eval_sampling_mode, dataset_mode=DatasetMode.TESTING,
            dataset_config=self.dataset_config, batch_size=self.overall_batch_size_eval,
            num_workers=self.overall_num_workers_eval))
