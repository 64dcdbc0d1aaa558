"""Train / predict wrappers around the video species classifiers (TimeDistributed
EfficientNet, SlowFast, European) using PyTorch Lightning.

`zamba train` and `zamba predict` end up in `train_model` / `predict_model` below.
"""
from datetime import datetime
import json
import os
from pathlib import Path
from typing import Optional

from loguru import logger
import pandas as pd
import pytorch_lightning as pl
from pytorch_lightning.callbacks import EarlyStopping, ModelCheckpoint
from pytorch_lightning.loggers import TensorBoardLogger
from pytorch_lightning.strategies import DDPStrategy
import torch
import yaml

from zamba.data.video import VideoLoaderConfig
from zamba.models.config import ModelConfig, PredictConfig, TrainConfig
from zamba.models.registry import available_models
from zamba.pytorch.finetuning import BackboneFinetuning
from zamba.pytorch_lightning.utils import ZambaDataModule, ZambaVideoClassificationLightningModule

GPUS_AVAILABLE = torch.cuda.device_count()
MODEL_MAPPING = {
    "TimeDistributedEfficientNet": {"transform": "zamba_image_model_transforms", "n_frames": 16},
    "SlowFast": {"transform": "slowfast_transforms", "n_frames": 32},
}


def configure_accelerator_and_devices_from_gpus(gpus: int):
    """Derive accelerator and number of devices for pl.Trainer from user-specified number of gpus."""
    if gpus > 0:
        accelerator = "gpu"
        devices = gpus
    else:
        accelerator = "cpu"
        devices = "auto"
    return accelerator, devices


def instantiate_model(checkpoint, labels=None, scheduler_config=None, from_scratch=False,
                      model_name=None, use_default_model_labels=None, species=None):
    """Load a LightningModule from a checkpoint, optionally replacing the head for new species."""
    if from_scratch:
        model_class = available_models[model_name]
        return model_class(species=species, scheduler_config=scheduler_config)

    hparams = torch.load(checkpoint, map_location=torch.device("cpu"))["hyper_parameters"]
    model_class = available_models[hparams["model_class"]]
    if labels is None or use_default_model_labels:
        return model_class.from_checkpoint(checkpoint)
    # replace the classification head with one sized for the new label set
    model = model_class.from_checkpoint(checkpoint)
    model.replace_head(num_classes=len(species))
    model.species = species
    return model


def validate_species(model, data_module):
    """Make sure the model head and the labels in the data agree."""
    if set(model.species) != set(data_module.species):
        missing = set(data_module.species) - set(model.species)
        raise ValueError(f"Labels {sorted(missing)} are not in the model; pass --from-scratch or a new head")


def train_model(
    train_config: TrainConfig,
    video_loader_config: Optional[VideoLoaderConfig] = None,
):
    """Trains a model.

    Args:
        train_config (TrainConfig): Pydantic config for training.
        video_loader_config (VideoLoaderConfig, optional): Pydantic config for preprocessing videos.
            If None, will use default for model specified in TrainConfig.
    """
    # set default video loader config if not provided
    if video_loader_config is None:
        video_loader_config = ModelConfig.get_default_video_loader_config(train_config.model_name)

    model = instantiate_model(
        checkpoint=train_config.checkpoint,
        scheduler_config=train_config.scheduler_config,
        labels=train_config.labels,
        from_scratch=train_config.from_scratch,
        model_name=train_config.model_name,
        use_default_model_labels=train_config.use_default_model_labels,
    )

    data_module = ZambaDataModule(
        video_loader_config=video_loader_config,
        transform=MODEL_MAPPING[model.__class__.__name__]["transform"],
        train_metadata=train_config.labels,
        batch_size=train_config.batch_size,
        num_workers=train_config.num_workers,
    )

    validate_species(model, data_module)

    train_config.save_dir.mkdir(parents=True, exist_ok=True)

    # add folder version_n that auto increments if we are not overwriting
    tensorboard_version = train_config.save_dir.name if train_config.overwrite else None
    tensorboard_save_dir = (
        train_config.save_dir.parent if train_config.overwrite else train_config.save_dir
    )

    tensorboard_logger = TensorBoardLogger(
        save_dir=tensorboard_save_dir,
        name=None,
        version=tensorboard_version,
        default_hp_metric=False,
    )

    logging_and_save_dir = (
        tensorboard_logger.log_dir if not train_config.overwrite else train_config.save_dir
    )

    model_checkpoint = ModelCheckpoint(
        dirpath=logging_and_save_dir,
        filename=train_config.model_name,
        monitor=train_config.early_stopping_config.monitor
        if train_config.early_stopping_config is not None
        else None,
        mode=train_config.early_stopping_config.mode
        if train_config.early_stopping_config is not None
        else "min",
    )

    callbacks = [model_checkpoint]

    if train_config.early_stopping_config is not None:
        callbacks.append(EarlyStopping(**train_config.early_stopping_config.dict()))

    if train_config.backbone_finetune_config is not None:
        callbacks.append(BackboneFinetuning(**train_config.backbone_finetune_config.dict()))

    accelerator, devices = configure_accelerator_and_devices_from_gpus(train_config.gpus)

    trainer = pl.Trainer(
        accelerator=accelerator,
        devices=devices,
        max_epochs=train_config.max_epochs,
        logger=tensorboard_logger,
        callbacks=callbacks,
        fast_dev_run=train_config.dry_run,
        precision=16 if train_config.gpus > 0 else 32,
        strategy=DDPStrategy(find_unused_parameters=False, process_group_backend="nccl")
        if (data_module.multiprocessing_context is not None) and (train_config.gpus > 1)
        else "auto",
        benchmark=True,
    )

    if video_loader_config.cache_dir is None:
        logger.info("No cache dir is specified. Videos will not be cached.")
    else:
        logger.info(f"Videos will be cached to {video_loader_config.cache_dir}.")

    if train_config.auto_lr_find:
        logger.info("Finding best learning rate.")
        tuner = pl.tuner.Tuner(trainer)
        tuner.lr_find(model, datamodule=data_module)

    try:
        git_hash = os.popen("git rev-parse HEAD").read().strip()
    except Exception:
        git_hash = None

    configuration = {
        "git_hash": git_hash,
        "model_class": model.model_class,
        "species": model.species,
        "starting_learning_rate": model.lr,
        "train_config": json.loads(train_config.json(exclude={"labels"})),
        "training_start_time": datetime.utcnow().isoformat(),
        "video_loader_config": json.loads(video_loader_config.json()),
    }

    if not train_config.dry_run:
        config_path = Path(logging_and_save_dir) / "train_configuration.yaml"
        config_path.parent.mkdir(exist_ok=True, parents=True)
        logger.info(f"Writing out full configuration to {config_path}.")
        with config_path.open("w") as fp:
            yaml.dump(configuration, fp)

    logger.info("Starting training...")
    trainer.fit(model, data_module)

    if not train_config.dry_run:
        if trainer.datamodule.test_dataloader() is not None:
            logger.info("Calculating metrics on holdout set.")
            test_metrics = trainer.test(dataloaders=trainer.datamodule.test_dataloader(), ckpt_path="best")[0]
            with (Path(logging_and_save_dir) / "test_metrics.json").open("w") as fp:
                json.dump(test_metrics, fp, indent=2)

    return trainer


def predict_model(
    predict_config: PredictConfig,
    video_loader_config: VideoLoaderConfig = None,
):
    """Predicts from a model and writes out predictions to a csv."""
    if video_loader_config is None:
        video_loader_config = ModelConfig.get_default_video_loader_config(predict_config.model_name)

    data_module = ZambaDataModule(
        video_loader_config=video_loader_config,
        transform=MODEL_MAPPING[predict_config.model_name]["transform"],
        predict_metadata=predict_config.filepaths,
        batch_size=predict_config.batch_size,
        num_workers=predict_config.num_workers,
    )

    model = instantiate_model(checkpoint=predict_config.checkpoint)

    accelerator, devices = configure_accelerator_and_devices_from_gpus(predict_config.gpus)

    trainer = pl.Trainer(
        accelerator=accelerator,
        devices=devices,
        logger=False,
        fast_dev_run=predict_config.dry_run,
    )

    configuration = {
        "model_class": model.model_class,
        "species": model.species,
        "predict_config": json.loads(predict_config.json(exclude={"filepaths"})),
        "inference_start_time": datetime.utcnow().isoformat(),
        "video_loader_config": json.loads(video_loader_config.json()),
    }

    if predict_config.save is not False:
        config_path = predict_config.save_dir / "predict_configuration.yaml"
        logger.info(f"Writing out full configuration to {config_path}.")
        with config_path.open("w") as fp:
            yaml.dump(configuration, fp)

    dataloader = data_module.predict_dataloader()
    logger.info("Starting prediction...")
    probas = trainer.predict(model=model, dataloaders=dataloader)

    df = pd.DataFrame(
        torch.cat(probas).numpy(), columns=model.species, index=dataloader.dataset.original_indices
    )
    if predict_config.proba_threshold is not None:
        df = (df > predict_config.proba_threshold).astype(int)
    elif predict_config.output_class_names:
        df = df.idxmax(axis=1)
    df.index.name = "filepath"

    if predict_config.save is not False:
        preds_path = predict_config.save_dir / "zamba_predictions.csv"
        logger.info(f"Saving out predictions to {preds_path}.")
        with preds_path.open("w") as fp:
            df.to_csv(fp, index=True)

    return df
