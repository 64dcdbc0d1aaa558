import os
from pathlib import Path
from functools import partial

import numpy as np
import torch
import hydra
import pytorch_lightning as pl
from pytorch_lightning import seed_everything
from pytorch_lightning.callbacks import ModelCheckpoint
from pytorch_lightning.loggers import WandbLogger

from nesymres.architectures.model import Model
from nesymres.architectures.data import DataModule
from nesymres.utils import load_metadata_hdf5
from nesymres.dclasses import FitParams, NNEquation, BFGSParams


@hydra.main(config_name="config")
def main(cfg):
    seed_everything(9)
    train_data = load_metadata_hdf5(hydra.utils.to_absolute_path(cfg.train_path))
    val_data = load_metadata_hdf5(hydra.utils.to_absolute_path(cfg.val_path))
    test_data = None
    data = DataModule(
        hydra.utils.to_absolute_path(cfg.train_path),
        hydra.utils.to_absolute_path(cfg.val_path),
        None,
        cfg,
    )

    model = Model(cfg=cfg.architecture)
    if cfg.wandb:
        wandb_logger = WandbLogger(
            project="nesymres",
            name=f"{Path(cfg.train_path).stem}_{cfg.architecture.num_inds}inds",
            log_model=False,
        )
    else:
        wandb_logger = None

    checkpoint_callback = ModelCheckpoint(
        monitor="train_loss",  # /dataloader_idx_0",
        dirpath=".",
        filename="log_{epoch:02d}-{val_loss:.2f}",
        mode="min",
    )

    trainer = pl.Trainer(
        distributed_backend="ddp",
        gpus=cfg.gpu,
        max_epochs=cfg.epochs,
        val_check_interval=cfg.val_check_interval,
        precision=cfg.precision,
        logger=wandb_logger,
        callbacks=[checkpoint_callback],
        resume_from_checkpoint=cfg.resume_from_checkpoint,
    )
    trainer.fit(model, data)


if __name__ == "__main__":
    main()
