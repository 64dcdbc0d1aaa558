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

"""
Trains the AgML `SegmentationModel` (DeepLabV3 + ResNet50) benchmarks on
the semantic segmentation datasets, e.g. `sugarbeet_weed_segmentation`,
`carrot_weeds_germany`, `rice_seedling_segmentation` and
`apple_flower_segmentation`.

Multi-GPU training uses Lightning's DDP strategy; run with e.g.

    CUDA_VISIBLE_DEVICES=0,1,2,3 python train_segmentation.py \
        --dataset carrot_weeds_germany --epochs 50
"""

import os
import argparse

import numpy as np

import torch
import torch.nn as nn
import torch.nn.functional as F

import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint, EarlyStopping, LearningRateMonitor
from pytorch_lightning.loggers import CSVLogger, TensorBoardLogger

import albumentations as A

import agml
from agml.models import SegmentationModel
from agml.models.losses import DiceLoss

from tools import gpus, accelerator, checkpoint_dir, MetricLogger


class SegmentationTrainingModel(SegmentationModel):
    """Adds a combined dice + cross-entropy loss and a poly LR schedule."""

    def __init__(self, num_classes, lr = 5e-3, epochs = 50, **kwargs):
        super(SegmentationTrainingModel, self).__init__(num_classes = num_classes)
        self._lr = lr
        self._epochs = epochs
        self._dice = DiceLoss()
        if num_classes == 1:
            self._ce = nn.BCEWithLogitsLoss()
        else:
            self._ce = nn.CrossEntropyLoss(ignore_index = 255)

    def _combined_loss(self, y_pred, y):
        if self._num_classes == 1:
            y = y.float().unsqueeze(1)
        return self._ce(y_pred, y) + 0.5 * self._dice(y_pred, y)

    def training_step(self, batch, *args, **kwargs): # noqa
        x, y = batch
        y_pred = self(x)['out']
        loss = self._combined_loss(y_pred, y)
        iou = self._iou(y_pred, y)
        self.log('loss', loss.item(), prog_bar = True)
        self.log('miou', iou.item(), prog_bar = True)
        return loss

    def validation_step(self, batch, *args, **kwargs): # noqa
        x, y = batch
        y_pred = self(x)['out']
        val_loss = self._combined_loss(y_pred, y)
        val_iou = self._iou(y_pred, y)
        self.log('val_loss', val_loss.item(), prog_bar = True, sync_dist = True)
        self.log('val_miou', val_iou.item(), prog_bar = True, sync_dist = True)
        return val_loss

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(
            self.parameters(), lr = self._lr, momentum = 0.9, weight_decay = 1e-4)
        lam = lambda epoch: (1 - epoch / self._epochs) ** 0.9
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lam)
        return [optimizer], [scheduler]


def build_loaders(dataset, batch_size, image_size = (512, 512)):
    loader = agml.data.AgMLDataLoader(dataset)
    loader.split(train = 0.8, val = 0.1, test = 0.1)
    loader.batch(batch_size = batch_size)
    loader.resize_images(image_size)
    loader.normalize_images('imagenet')
    loader.mask_to_channel_basis() if loader.num_classes > 1 else None
    loader.transform(dual_transform = A.Compose([
        A.HorizontalFlip(p = 0.5),
        A.VerticalFlip(p = 0.5),
        A.RandomRotate90(p = 0.5),
    ]))
    train_ds = loader.train_data.export_torch(num_workers = 8)
    val_ds = loader.val_data.export_torch(num_workers = 8)
    return loader, train_ds, val_ds


def train(dataset, epochs, batch_size, save_dir = None, overwrite = None, lr = 5e-3):
    """Constructs the training loop and trains a model."""
    save_dir = checkpoint_dir(save_dir, dataset)
    log_dir = save_dir.replace('checkpoints', 'logs')
    os.makedirs(log_dir, exist_ok = True)

    if os.path.exists(save_dir) and len(os.listdir(save_dir)) >= 4 and not overwrite:
        print(f"Checkpoints already exist for {dataset} at {save_dir}, skipping.")
        return

    pl.seed_everything(2499751)

    callbacks = [
        ModelCheckpoint(
            dirpath = save_dir, mode = 'min',
            filename = f"{dataset}" + "-epoch{epoch:02d}-val_loss_{val_loss:.2f}",
            monitor = 'val_loss', save_top_k = 3,
            auto_insert_metric_name = False),
        EarlyStopping(monitor = 'val_loss', min_delta = 0.001, patience = 5),
        LearningRateMonitor(logging_interval = 'epoch'),
        MetricLogger(os.path.join(log_dir, f'{dataset}-metrics.txt'))
    ]

    loader, train_ds, val_ds = build_loaders(dataset, batch_size)
    loggers = [CSVLogger(log_dir), TensorBoardLogger(log_dir)]
    model = SegmentationTrainingModel(loader.num_classes, lr = lr, epochs = epochs)

    n_devices = gpus(None)
    msg = f"Training dataset {dataset} on {n_devices} device(s)!"
    print("\n" + "=" * len(msg) + "\n" + msg + "\n" + "=" * len(msg) + "\n")
    trainer = pl.Trainer(
        max_epochs = epochs,
        accelerator = accelerator(),
        devices = max(n_devices, 1),
        strategy = 'ddp' if n_devices > 1 else None,
        precision = 16 if n_devices > 0 else 32,
        sync_batchnorm = n_devices > 1,
        callbacks = callbacks,
        logger = loggers,
        log_every_n_steps = 5)
    trainer.fit(model = model, train_dataloaders = train_ds, val_dataloaders = val_ds)

    if trainer.is_global_zero:
        torch.save(model.net.state_dict(), os.path.join(save_dir, 'final_model.pth'))


def execute():
    ap = argparse.ArgumentParser()
    ap.add_argument('--dataset', type = str, nargs = '+', help = "The name of the dataset.")
    ap.add_argument('--regenerate-existing', action = 'store_true', default = False)
    ap.add_argument('--checkpoint_dir', type = str, default = None)
    ap.add_argument('--epochs', type = int, default = 50)
    ap.add_argument('--batch_size', type = int, default = 8)
    ap.add_argument('--lr', type = float, default = 5e-3)
    args = ap.parse_args()

    if args.dataset[0] == 'all':
        datasets = agml.data.public_data_sources(ml_task = 'semantic_segmentation')
        datasets = [ds.name for ds in datasets]
    else:
        datasets = args.dataset
    for ds in datasets:
        train(ds, epochs = args.epochs, batch_size = args.batch_size,
              save_dir = args.checkpoint_dir, overwrite = args.regenerate_existing,
              lr = args.lr)


if __name__ == '__main__':
    execute()
