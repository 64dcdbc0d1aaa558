"""Entry point for TeCNO-style surgical phase recognition.

Two stages are trained with this script:
  1. a ResNet50 feature extractor on single Cholec80 frames (modules/cholec/cholec_feature_extract.py)
  2. a multi-stage causal TCN on the extracted per-video features (modules/mstcn/tecno.py)

Usage:
    python train.py -c modules/cholec/config/config_feature_extract.yml
    python train.py -c modules/mstcn/config/config_tcn.yml --gpus 2

All experiments in the paper were run on a single GPU (NVIDIA Titan RTX, 24 GB).
"""
import configargparse
import os
import sys
import warnings
from datetime import datetime
from pathlib import Path

import torch
import pytorch_lightning as pl
from pytorch_lightning import Trainer, seed_everything
from pytorch_lightning.callbacks import ModelCheckpoint, LearningRateMonitor
from pytorch_lightning.loggers import TensorBoardLogger, WandbLogger

from utils.utils import argparse_summary, get_class_by_path
from utils.configargparse_arguments import build_configargparser

warnings.filterwarnings("ignore", category=UserWarning)
SEED = 2334


def train(hparams, ModuleClass, ModelClass, DatasetClass, logger):
    """Build module/model/dataset from the parsed hparams and run fit + test."""
    # ------------------------
    # 1 INIT LIGHTNING MODEL
    # ------------------------
    model = ModelClass(hparams=hparams)
    dataset = DatasetClass(hparams=hparams)
    module = ModuleClass(hparams, model, dataset=dataset)

    # ------------------------
    # 2 INIT CALLBACKS
    # ------------------------
    checkpoint_dir = Path(logger.log_dir) / "checkpoints"
    checkpoint_callback = ModelCheckpoint(
        dirpath=str(checkpoint_dir),
        filename="{epoch}-{" + hparams.early_stopping_metric + ":.4f}",
        save_top_k=hparams.save_top_k,
        verbose=True,
        monitor=hparams.early_stopping_metric,
        mode="max",
        save_last=True,
    )
    lr_monitor = LearningRateMonitor(logging_interval="epoch")

    # ------------------------
    # 3 INIT TRAINER
    # ------------------------
    n_visible = torch.cuda.device_count()
    if hparams.gpus > n_visible:
        print(f"requested {hparams.gpus} GPUs but only {n_visible} visible, clamping")
        hparams.gpus = n_visible

    trainer = Trainer(
        gpus=hparams.gpus,
        logger=logger,
        min_epochs=hparams.min_epochs,
        max_epochs=hparams.max_epochs,
        fast_dev_run=hparams.fast_dev_run,
        limit_train_batches=hparams.limit_train_batches,
        limit_val_batches=hparams.limit_val_batches,
        limit_test_batches=hparams.limit_test_batches,
        callbacks=[checkpoint_callback, lr_monitor],
        weights_summary="full",
        num_sanity_val_steps=hparams.num_sanity_val_steps,
        log_every_n_steps=hparams.log_every_n_steps,
        accelerator=hparams.distributed_backend if hparams.gpus > 1 else None,
        sync_batchnorm=hparams.gpus > 1,
        precision=16 if hparams.use_amp else 32,
        deterministic=True,
    )
    # ------------------------
    # 4 START TRAINING
    # ------------------------
    trainer.fit(module)
    print(
        f"Best: {checkpoint_callback.best_model_score} | monitor: {checkpoint_callback.monitor} "
        f"| path: {checkpoint_callback.best_model_path}"
        f"\nTesting..."
    )
    trainer.test(ckpt_path=checkpoint_callback.best_model_path)


def build_logger(hparams, exp_name):
    if hparams.logger == "wandb":
        return WandbLogger(
            name=exp_name,
            project=hparams.wandb_project_name,
            save_dir=hparams.output_path,
        )
    return TensorBoardLogger(save_dir=hparams.output_path, name=exp_name)


def main():
    root_dir = Path(__file__).parent
    parser = configargparse.ArgParser(config_file_parser_class=configargparse.YAMLConfigFileParser)
    parser.add_argument("-c", is_config_file=True, help="config file path")
    parser, hparams = build_configargparser(parser)

    # each LightningModule defines arguments relevant to it
    # ------------------------
    # LOAD MODULE
    # ------------------------
    module_path = f"modules.{hparams.module}"
    ModuleClass = get_class_by_path(module_path)
    parser = ModuleClass.add_module_specific_args(parser)
    # ------------------------
    # LOAD MODEL
    # ------------------------
    model_path = f"models.{hparams.model}"
    ModelClass = get_class_by_path(model_path)
    parser = ModelClass.add_model_specific_args(parser)
    # ------------------------
    # LOAD DATASET
    # ------------------------
    dataset_path = f"datasets.{hparams.dataset}"
    DatasetClass = get_class_by_path(dataset_path)
    parser = DatasetClass.add_dataset_specific_args(parser)
    # ------------------------
    # PRINT PARAMS & INIT LOGGER
    # ------------------------
    hparams = parser.parse_args()

    date_str = datetime.now().strftime("%y%m%d-%H%M%S_")
    exp_name = (
        date_str
        + hparams.name
        + "_"
        + ModuleClass.__name__
        + "_"
        + ModelClass.__name__
        + "_"
        + DatasetClass.__name__
    )
    hparams.output_path = str(Path(hparams.output_path).absolute() / exp_name)
    os.makedirs(hparams.output_path, exist_ok=True)

    logger = build_logger(hparams, exp_name)
    argparse_summary(hparams, parser)

    seed_everything(SEED)
    # benchmark mode speeds up the ResNet50 stage considerably on cuDNN
    torch.backends.cudnn.benchmark = not hparams.deterministic_cudnn

    print(f"torch {torch.__version__} | lightning {pl.__version__} | python {sys.version.split()[0]}")
    train(hparams, ModuleClass, ModelClass, DatasetClass, logger)


if __name__ == "__main__":
    main()
