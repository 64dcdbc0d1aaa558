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
Trains the AgML `ClassificationModel` benchmarks (EfficientNetB4 transfer
models) on the public classification datasets, e.g. `plant_village_classification`,
`bean_disease_uganda`, `leaf_counting_denmark` or `rangeland_weeds_australia`.

Example:
    python train_classification.py --dataset plant_village_classification \
        --epochs 25 --batch_size 16 --regenerate_existing
"""

import os
import argparse

import torch
import torch.nn as nn

import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint, EarlyStopping
from pytorch_lightning.loggers import CSVLogger, TensorBoardLogger

import agml
from agml.models import ClassificationModel

from tools import gpus, checkpoint_dir, MetricLogger


class ClassificationTrainingModel(ClassificationModel):
    """Wraps the `ClassificationModel` with a configurable learning rate."""

    def __init__(self, num_classes, lr = 3e-4, **kwargs):
        super(ClassificationTrainingModel, self).__init__(num_classes = num_classes)
        self._lr = lr

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr = self._lr)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max = 25)
        return [optimizer], [scheduler]


def build_loaders(dataset, batch_size, num_workers = 8):
    loader = agml.data.AgMLDataLoader(dataset)
    loader.split(train = 0.8, val = 0.1, test = 0.1)
    loader.batch(batch_size = batch_size)
    loader.resize_images('imagenet')
    loader.normalize_images('imagenet')
    loader.labels_to_one_hot()
    train_data = loader.train_data
    train_data.shuffle_data = True
    train_ds = train_data.export_torch(num_workers = num_workers)
    val_ds = loader.val_data.export_torch(num_workers = num_workers)
    test_ds = loader.test_data.export_torch(num_workers = num_workers)
    return loader, train_ds, val_ds, test_ds


def train(dataset, epochs, batch_size, save_dir = None, overwrite = None, lr = 3e-4):
    """Constructs the training loop and trains a model."""
    save_dir = checkpoint_dir(save_dir, dataset)
    log_dir = save_dir.replace('checkpoints', 'logs')
    os.makedirs(log_dir, exist_ok = True)

    # Check if the dataset already has benchmarks.
    if os.path.exists(save_dir) and os.path.isdir(save_dir):
        if not overwrite and len(os.listdir(save_dir)) >= 4:
            print(f"Checkpoints already exist for {dataset} "
                  f"at {save_dir}, skipping generation.")
            return

    # Set up the checkpoint saving callback.
    callbacks = [
        ModelCheckpoint(
            dirpath = save_dir, mode = 'min',
            filename = f"{dataset}" + "-epoch{epoch:02d}-val_loss_{val_loss:.2f}",
            monitor = 'val_loss',
            save_top_k = 3,
            auto_insert_metric_name = False
        ),
        EarlyStopping(
            monitor = 'val_loss',
            min_delta = 0.001,
            patience = 3,
        ),
        MetricLogger(os.path.join(log_dir, f'{dataset}-metrics.txt'))
    ]

    # Construct the data.
    loader, train_ds, val_ds, test_ds = build_loaders(dataset, batch_size)

    # Create the loggers.
    loggers = [
        CSVLogger(log_dir),
        TensorBoardLogger(log_dir)
    ]

    # Construct the model.
    model = ClassificationTrainingModel(loader.num_classes, lr = lr)

    # Create the trainer and train the model.
    msg = f"Training dataset {dataset}!"
    print("\n" + "=" * len(msg) + "\n" + msg + "\n" + "=" * len(msg) + "\n")
    trainer = pl.Trainer(
        max_epochs = epochs,
        gpus = gpus(None),
        callbacks = callbacks,
        logger = loggers,
        log_every_n_steps = 5)
    trainer.fit(
        model = model,
        train_dataloaders = train_ds,
        val_dataloaders = val_ds,
    )

    # Run the test set and save the final weights.
    trainer.test(model, dataloaders = test_ds)
    torch.save(model.net.state_dict(), os.path.join(save_dir, 'final_model.pth'))


def execute():
    # Parse input arguments.
    ap = argparse.ArgumentParser()
    ap.add_argument(
        '--dataset', type = str, nargs = '+', help = "The name of the dataset.")
    ap.add_argument(
        '--regenerate-existing', action = 'store_true',
        default = False, help = "Whether to re-generate existing benchmarks.")
    ap.add_argument(
        '--checkpoint_dir', type = str, default = '/data2/amnjoshi/checkpoints',
        help = "The checkpoint directory to save to.")
    ap.add_argument(
        '--epochs', type = int, default = 25,
        help = "How many epochs to train for. Default is 25.")
    ap.add_argument(
        '--batch_size', type = int, default = 16,
        help = "The batch size for training. Default is 16.")
    ap.add_argument(
        '--lr', type = float, default = 3e-4, help = "Learning rate.")
    args = ap.parse_args()

    # Train the model.
    if args.dataset[0] in agml.data.public_data_sources(ml_task = 'image_classification'):
        train(args.dataset[0],
              epochs = args.epochs,
              batch_size = args.batch_size,
              save_dir = args.checkpoint_dir,
              overwrite = args.regenerate_existing,
              lr = args.lr)
    else:
        if args.dataset[0] == 'all':
            datasets = [ds for ds in agml.data.public_data_sources(
                ml_task = 'image_classification')]
        else:
            datasets = args.dataset
        for ds in datasets:
            train(ds,
                  epochs = args.epochs,
                  batch_size = args.batch_size,
                  save_dir = args.checkpoint_dir,
                  overwrite = args.regenerate_existing,
                  lr = args.lr)


if __name__ == '__main__':
    execute()
