#  OpenKiwi: Open-Source Machine Translation Quality Estimation
#  Copyright (C) 2020 Unbabel <openkiwi@unbabel.com>
#
#  This program is free software: you can redistribute it and/or modify
#  it under the terms of the GNU Affero General Public License as published
#  by the Free Software Foundation, either version 3 of the License, or
#  (at your option) any later version.
#
#  This program is distributed in the hope that it will be useful,
#  but WITHOUT ANY WARRANTY; without even the implied warranty of
#  MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
#  GNU Affero General Public License for more details.
#
#  You should have received a copy of the GNU Affero General Public License
#  along with this program.  If not, see <https://www.gnu.org/licenses/>.
#
import logging
import threading
from abc import ABCMeta
from collections import OrderedDict, defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import numpy as np
import pytorch_lightning as pl
import torch
from pydantic import PositiveInt, validator
from pydantic.types import confloat
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler

import kiwi
from kiwi import constants as const
from kiwi.data.batch import MultiFieldBatch
from kiwi.data.datasets.wmt_qe_dataset import WMTQEDataset
from kiwi.data.encoders.wmt_qe_data_encoder import WMTQEDataEncoder
from kiwi.lib.utils import load_torch_file
from kiwi.metrics.metrics import Metric
from kiwi.modules.common.layer_norm import TokenizedLayerNorm
from kiwi.systems._meta_module import MetaModule, Serializable
from kiwi.systems.outputs.quality_estimation import QEOutputs
from kiwi.systems.outputs.translation_language_model import TLMOutputs
from kiwi.training import optimizers
from kiwi.utils.io import BaseConfig
from kiwi.utils.tensors import pad_zeros_around_timesteps

logger = logging.getLogger(__name__)


class BatchSizeConfig(BaseConfig):
    train: PositiveInt = None
    valid: PositiveInt = None
    test: PositiveInt = None


class ModelConfig(BaseConfig):
    encoder: Any = None
    tlm_outputs: Any = None
    decoder: Any = None
    outputs: Any = None


class QESystem(Serializable, pl.LightningModule, metaclass=ABCMeta):
    subclasses = {}

    class Config(BaseConfig):
        """System configuration base class."""

        class_name: Optional[str]
        """System class to use (must be a subclass of ``QESystem``)."""

        load: Optional[Path]
        """Load pretrained Kiwi model. If set, system architecture and vocabulary
        parameters are ignored."""

        load_encoder: Optional[Path]
        """Load pretrained encoder (e.g., the Predictor).
        If set, encoder architecture and vocabulary parameters are ignored
        (for the fields that are part of the encoder)."""

        load_vocabs: Optional[Path]

        model: Optional[Dict]
        """System specific options; they will be dynamically validated and instantiated
        depending of the ``class_name`` or ``load``."""

        data_processing: Optional[WMTQEDataEncoder.Config]

        optimizer: Optional[optimizers.OptimizerConfig]

        batch_size: BatchSizeConfig = 1

        num_data_workers: int = 4

        @validator('class_name', pre=True)
        def map_name_to_class(cls, v):
            if v in QESystem.subclasses:
                return v
            else:
                raise ValueError(
                    f'{v} is not a subclass of QESystem; make sure its class is '
                    f'decorated with `@QESystem.register_subclass`'
                )

        @validator('batch_size', pre=True, always=True)
        def check_batching(cls, v):
            if isinstance(v, int):
                return {'train': v, 'valid': v, 'test': v}
            return v

    def __init__(self, config, data_config: WMTQEDataset.Config = None):
        super().__init__()

        self.config = config
        self.data_config = data_config

        # Intermediate blocks
        self.encoder = None
        self.tlm_outputs = None
        self.decoder = None
        self.outputs = None

        # Metrics
        self.metrics = None
        self.main_metric_list = None

        self.data_encoders = None
        self.train_dataset = None
        self.valid_dataset = None
        self.test_dataset = None
        self._lock = threading.Lock()

        self._load_dict = None
        self._load_dataset = None

        if self.config.load_encoder:
            logger.info(f'Loading encoder from {self.config.load_encoder}')
            self._load_dict = QESystem._load_dict(self.config.load_encoder)

    @classmethod
    def register_subclass(cls, subclass):
        cls.subclasses[subclass.__name__] = subclass
        return subclass

    def set_config_options(
        self,
        optimizer_config: optimizers.OptimizerConfig = None,
        batch_size: BatchSizeConfig = None,
        data_config: WMTQEDataset.Config = None,
    ):
        if optimizer_config:
            self.config.optimizer = optimizer_config
        if batch_size:
            self.config.batch_size = batch_size
        if data_config:
            self.data_config = data_config

    def _load_datasets(self):
        self.train_dataset, self.valid_dataset = WMTQEDataset.build(
            config=self.data_config, train=True, valid=True
        )
        self.data_encoders.fit_vocabularies(self.train_dataset)

    def prepare_data(self):
        """Initialize the data sources that model will use to create the data loaders.
        """
        if not self.data_config:
            raise ValueError(
                'No configuration for data provided; pass it in the constructor or call'
                '`set_config_options(data_config=data_config)`'
            )
        self._load_datasets()

    def train_dataloader(self) -> DataLoader:
        """Return a PyTorch DataLoader for the training set.

        Requires calling ``prepare_data`` beforehand.

        Return:
            PyTorch DataLoader
        """
        sampler = RandomSampler(self.train_dataset)
        return DataLoader(
            self.train_dataset,
            batch_size=self.config.batch_size.train,
            sampler=sampler,
            num_workers=self.config.num_data_workers,
            collate_fn=self.data_encoders.collate_fn,
            pin_memory=torch.cuda.is_initialized(),  # NOQA
        )

    def val_dataloader(self) -> DataLoader:
        sampler = SequentialSampler(self.valid_dataset)
        return DataLoader(
            self.valid_dataset,
            batch_size=self.config.batch_size.valid,
            sampler=sampler,
            num_workers=self.config.num_data_workers,
            collate_fn=self.data_encoders.collate_fn,
            pin_memory=torch.cuda.is_initialized(),  # NOQA: valid split
        )

    def prepare_dataloader(
        self, dataset: WMTQEDataset, batch_size: int = 1, num_workers: int = 0
    ):
        return DataLoader(
            dataset,
            batch_size=batch_size,
            sampler=SequentialSampler(dataset),
            num_workers=num_workers,
            collate_fn=self.data_encoders.collate_fn,
            pin_memory=torch.cuda.is_initialized(),  # NOQA: inference
        )

    def forward(self, batch_inputs):
        encoder_features = self.encoder(batch_inputs)
        model_outputs = self.decoder(encoder_features, batch_inputs)
        outputs = self.outputs(model_outputs, batch_inputs)

        if self.tlm_outputs:
            outputs.update(self.tlm_outputs(encoder_features, batch_inputs))

        return outputs

    def training_step(self, batch: MultiFieldBatch, batch_idx: int) -> Dict:
        model_out = self(batch)
        loss_dict = self.loss(model_out, batch)

        self.log('train_loss', loss_dict[const.LOSS], on_step=True, on_epoch=True)
        return {'loss': loss_dict[const.LOSS], 'log': loss_dict}

    def validation_step(self, batch: MultiFieldBatch, batch_idx: int):
        model_out = self(batch)
        loss_dict = self.loss(model_out, batch)
        metrics_dict = self.metrics_step(batch, model_out, loss_dict)
        return dict(val_losses=loss_dict, val_metrics=metrics_dict)

    def validation_epoch_end(self, outputs: List[Dict]):
        loss_dict = defaultdict(float)
        for output in outputs:
            for key, value in output['val_losses'].items():
                loss_dict[key] += value
        loss_dict = {key: value / len(outputs) for key, value in loss_dict.items()}

        metrics = self.metrics_end([output['val_metrics'] for output in outputs])
        main_metric = self.main_metric(metrics)
        for key, value in metrics.items():
            self.log(f'val_{key}', value, prog_bar=False)
        self.log('val_' + self.main_metric_name, main_metric, prog_bar=True)

    def predict(self, batch_inputs, positive_class_label=const.BAD):
        """Predict over a dataloader and return a dict of lists of predictions."""
        predictions = defaultdict(list)
        self.eval()
        with torch.no_grad():
            for batch in batch_inputs:
                batch = self.transfer_batch_to_device(batch, self.device)
                model_out = self(batch)
                batch_predictions = self.outputs.decode_outputs(
                    model_out, batch, positive_class_label
                )
                for key, values in batch_predictions.items():
                    if isinstance(values, list):
                        predictions[key] += values
                    else:
                        predictions[key].append(values)
        return dict(predictions)

    def loss(self, model_out, batch):
        loss_dict = self.outputs.loss(model_out, batch)
        if self.tlm_outputs:
            loss_dict.update(self.tlm_outputs.loss(model_out, batch))
        loss_dict[const.LOSS] = sum(
            value for key, value in loss_dict.items() if key != const.LOSS
        )
        return loss_dict

    def metrics_step(self, batch, model_out, loss_dict):
        metrics_dict = {}
        for metric in self.metrics:
            metrics_dict[metric.name] = metric.step(model_out, batch, loss_dict)
        return metrics_dict

    def metrics_end(self, steps, prefix=''):
        metrics_dict = OrderedDict()
        for metric in self.metrics:
            metrics_dict.update(
                metric.compute([step[metric.name] for step in steps], prefix=prefix)
            )
        return metrics_dict

    @property
    def main_metric_name(self):
        return '+'.join(self.main_metric_list)

    def main_metric(self, metrics):
        main_metric = 0.0
        for name in self.main_metric_list:
            main_metric += metrics[name]
        return main_metric

    @property
    def main_metric_ordering(self):
        return self.metrics[0].best_ordering

    def configure_optimizers(self):
        return optimizers.from_config(
            self.config.optimizer,
            self.parameters(),
            training_data_size=len(self.train_dataset),
            batch_size=self.config.batch_size.train,
        )

    def on_save_checkpoint(self, checkpoint):
        checkpoint[self.__class__.__name__] = self.save_dict()
        checkpoint['kiwi_version'] = kiwi.__version__

    @staticmethod
    def _load_dict(path):
        module_dict = load_torch_file(path)
        return module_dict

    @classmethod
    def load(cls, path: Path, map_location=None):
        logger.info(f'Loading system from {path}')
        module_dict = load_torch_file(path, map_location=map_location)
        system = QESystem.from_dict(module_dict=module_dict)
        return system

    @classmethod
    def from_config(cls, config: Config, data_config: WMTQEDataset.Config = None):
        if config.load:
            system = QESystem.load(config.load)
            system.set_config_options(
                optimizer_config=config.optimizer,
                batch_size=config.batch_size,
                data_config=data_config,
            )
        else:
            system_cls = cls.subclasses[config.class_name]
            system = system_cls(config=config, data_config=data_config)

        return system

    @classmethod
    def from_dict(cls, module_dict: Dict[str, Any]):
        system_name = module_dict['class_name']
        system_cls = cls.subclasses[system_name]
        config = system_cls.Config(**module_dict[system_name]['config'])
        system = system_cls(config=config)
        system.load_state_dict(module_dict['state_dict'])
        return system
