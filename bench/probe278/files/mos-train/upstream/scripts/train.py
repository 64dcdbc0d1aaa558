#!/usr/bin/env python3
# @file      train.py
# @author    Benedikt Mersch     [mersch@igg.uni-bonn.de]
# Copyright (c) 2022 Benedikt Mersch, all rights reserved

import click
import yaml
import os
import copy
import torch
import MinkowskiEngine as ME
import pytorch_lightning as pl
from pytorch_lightning.callbacks import LearningRateMonitor
from pytorch_lightning import loggers as pl_loggers
from pytorch_lightning.callbacks import ModelCheckpoint

import mos4d.datasets.datasets as datasets
import mos4d.models.models as models


@click.command()
### Add your options here
@click.option(
    "--config",
    "-c",
    type=str,
    help="path to the config file (.yaml)",
    default="./config/config.yaml",
)
@click.option(
    "--weights",
    "-w",
    type=str,
    help="path to pretrained weights (.ckpt). Use this flag if you just want to load the weights from the checkpoint file without resuming training.",
    default=None,
)
@click.option(
    "--checkpoint",
    "-ckpt",
    type=str,
    help="path to checkpoint file (.ckpt) to resume training.",
    default=None,
)
@click.option(
    "--num_gpus",
    type=int,
    help="overrides TRAIN.N_GPUS from the config",
    default=None,
)
def main(config, weights, checkpoint, num_gpus):
    if checkpoint:
        cfg = torch.load(checkpoint)["hyper_parameters"]
    else:
        cfg = yaml.safe_load(open(config))

    if num_gpus is not None:
        cfg["TRAIN"]["N_GPUS"] = num_gpus
    n_gpus = min(cfg["TRAIN"]["N_GPUS"], torch.cuda.device_count())

    # Load data and model
    data = datasets.KittiSequentialModule(cfg)

    if weights is None:
        model = models.MOSNet(cfg)
    else:
        ckpt = torch.load(weights, map_location="cpu")
        model = models.MOSNet(ckpt["hyper_parameters"])
        model.load_state_dict(ckpt["state_dict"])

    if n_gpus > 1:
        # MinkowskiEngine ships its own SyncBN, the torch one does not understand SparseTensors
        model = ME.MinkowskiSyncBatchNorm.convert_sync_batchnorm(model)

    # Add callbacks
    lr_monitor = LearningRateMonitor(logging_interval="step")
    checkpoint_saver = ModelCheckpoint(
        monitor="val_moving_iou_step0",
        filename=cfg["EXPERIMENT"]["ID"] + "_{epoch:03d}_{val_moving_iou_step0:.3f}",
        mode="max",
        save_last=True,
    )

    # Logger
    log_dir = "./logs"
    os.makedirs(log_dir, exist_ok=True)
    tb_logger = pl_loggers.TensorBoardLogger(
        log_dir, name=cfg["EXPERIMENT"]["ID"], default_hp_metric=False
    )

    # Setup trainer
    trainer = pl.Trainer(
        gpus=n_gpus,
        strategy="ddp" if n_gpus > 1 else None,
        logger=tb_logger,
        max_epochs=cfg["TRAIN"]["MAX_EPOCH"],
        accumulate_grad_batches=cfg["TRAIN"]["ACC_BATCHES"],
        callbacks=[lr_monitor, checkpoint_saver],
    )

    # Train!
    trainer.fit(model, data, ckpt_path=checkpoint)


if __name__ == "__main__":
    main()
