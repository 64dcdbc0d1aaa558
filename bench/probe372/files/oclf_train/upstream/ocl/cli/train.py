#!/usr/bin/env python
"""Train a slot attention type model."""
import dataclasses
import logging
import os
from typing import Any, Dict, Optional

import hydra
import hydra_zen
import pytorch_lightning as pl
import torch
from pytorch_lightning.utilities.seed import seed_everything

import ocl.hydra_plugins  # noqa: F401
from ocl import base
from ocl.cli import cli_utils, eval_utils, train_utils
from ocl.combined_model import CombinedModel
from ocl.config.datasets import DataModuleConfig
from ocl.config.metrics import MetricConfig
from ocl.plugins import Plugin

logger = logging.getLogger("train")

TrainerConf = hydra_zen.builds(
    pl.Trainer, max_epochs=100, zen_partial=False, populate_full_signature=True
)


@dataclasses.dataclass
class TrainingConfig:
    """Configuration of a training run."""

    dataset: DataModuleConfig
    models: Any  # When provided with dict wrap in `utils.Combined`, otherwise interpret as model.
    trainer: TrainerConf = dataclasses.field(default_factory=lambda: TrainerConf())
    training_vis_frequency: Optional[int] = None
    training_metrics: Optional[Dict[str, MetricConfig]] = None
    evaluation_metrics: Optional[Dict[str, MetricConfig]] = None
    load_checkpoint: Optional[str] = None
    load_model_weight: Optional[str] = None
    seed: Optional[int] = None
    experiment: Dict[str, Any] = dataclasses.field(default_factory=lambda: {"callbacks": {}})
    root_output_folder: Optional[str] = None


hydra.core.config_store.ConfigStore.instance().store(
    name="training_config",
    node=TrainingConfig,
)


def _num_devices(trainer_cfg) -> int:
    devices = trainer_cfg.get("devices", 1)
    if devices in (-1, "auto", None):
        # use every visible GPU on the node
        return torch.cuda.device_count()
    if isinstance(devices, (list, tuple)):
        return len(devices)
    return int(devices)


def _configure_precision():
    # A100s: allow TF32 tensor cores for the ViT feature extractor
    if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        logger.info("Enabled TF32 matmuls on Ampere GPU.")


def build_and_register_datamodule_from_config(
    config: TrainingConfig,
    **datamodule_kwargs,
) -> pl.LightningDataModule:
    datamodule = hydra_zen.instantiate(
        config.dataset, _convert_="all", **datamodule_kwargs
    )
    return datamodule


def build_model_from_config(
    config: TrainingConfig,
    checkpoint_path: Optional[str] = None,
) -> pl.LightningModule:
    models = hydra_zen.instantiate(config.models, _convert_="all")
    optimizers = hydra_zen.instantiate(config.optimizers, _convert_="all")
    losses = hydra_zen.instantiate(config.losses, _convert_="all")
    visualizations = hydra_zen.instantiate(config.visualizations, _convert_="all")

    training_metrics = hydra_zen.instantiate(config.training_metrics)
    evaluation_metrics = hydra_zen.instantiate(config.evaluation_metrics)

    train_vis_freq = config.training_vis_frequency if config.training_vis_frequency else 100

    if checkpoint_path is None:
        model = CombinedModel(
            models=models,
            optimizers=optimizers,
            losses=losses,
            visualizations=visualizations,
            training_metrics=training_metrics,
            evaluation_metrics=evaluation_metrics,
            vis_log_frequency=train_vis_freq,
        )
    else:
        model = CombinedModel.load_from_checkpoint(
            checkpoint_path,
            strict=False,
            models=models,
            optimizers=optimizers,
            losses=losses,
            visualizations=visualizations,
            training_metrics=training_metrics,
            evaluation_metrics=evaluation_metrics,
            vis_log_frequency=train_vis_freq,
        )

    if config.load_model_weight:
        state = torch.load(config.load_model_weight, map_location="cpu")
        model.load_weights_from_checkpoint(state)
        logger.info(f"Loaded model weights from {config.load_model_weight}")
    return model


@hydra.main(config_name="training_config", config_path="../../configs/", version_base="1.1")
def train(config: TrainingConfig):
    # Set all relevant random seeds. If `config.seed is None`, the function samples a random value.
    # The seed is then propagated to all spawned data loader workers.
    seed = seed_everything(config.seed, workers=True)

    _configure_precision()

    num_devices = _num_devices(config.trainer)
    batch_size = config.dataset.batch_size
    logger.info(
        f"Training on {num_devices} GPU(s), per-device batch size {batch_size}, "
        f"effective batch size {num_devices * batch_size}."
    )

    datamodule = build_and_register_datamodule_from_config(config, seed=seed)
    model = build_model_from_config(config)

    callbacks = hydra_zen.instantiate(config.experiment.callbacks, _convert_="all")
    callbacks = callbacks if callbacks else []
    if config.trainer.get("logger") is not False:
        # Only add learning rate monitor if logger is defined.
        callbacks.append(pl.callbacks.LearningRateMonitor("step"))

    # Explicitly instantiate the trainer, so we can add callbacks that may not be in the config.
    trainer: pl.Trainer = hydra_zen.instantiate(
        config.trainer,
        callbacks=callbacks,
        _convert_="all",
    )

    if trainer.logger is not None:
        trainer.logger.log_hyperparams(cli_utils.make_log_dict(config))

    if config.load_checkpoint:
        checkpoint_path = hydra.utils.to_absolute_path(config.load_checkpoint)
    else:
        checkpoint_path = None

    trainer.fit(model, datamodule=datamodule, ckpt_path=checkpoint_path)

    if trainer.is_global_zero:
        logger.info(
            "Peak GPU memory: %.2f GB",
            torch.cuda.max_memory_allocated() / 1024**3,
        )


if __name__ == "__main__":
    train()
