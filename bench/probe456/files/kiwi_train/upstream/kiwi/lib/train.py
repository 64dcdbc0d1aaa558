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
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import pytorch_lightning as pl
import torch
from pydantic import PositiveInt, validator
from pytorch_lightning import Callback
from pytorch_lightning.callbacks import EarlyStopping, ModelCheckpoint
from pytorch_lightning.loggers import MLFlowLogger
from typing_extensions import Literal

from kiwi import constants as const
from kiwi.data.datasets.wmt_qe_dataset import WMTQEDataset
from kiwi.lib import evaluate
from kiwi.lib.utils import (
    configure_logging,
    configure_seed,
    file_to_configuration,
    save_config_to_file,
)
from kiwi.loggers import MLFlowTrackingLogger
from kiwi.systems.qe_system import QESystem
from kiwi.utils.io import BaseConfig, generate_slug

logger = logging.getLogger(__name__)


class RunConfig(BaseConfig):
    """Options for each run."""

    seed: int = 42
    """Random seed"""

    experiment_name: str = 'default'
    """If using MLflow, it will log this run under this experiment name, which appears
    as a separate section in the UI. It will also be used in some messages and files."""

    output_dir: Path = None
    """Output several files for this run under this directory.
    If not specified, a directory under "./runs/" is created or reused based on the
    ``run_id``. Files might also be sent to MLflow depending on the
    ``mlflow_always_log_artifacts`` option."""

    run_id: str = None
    """If specified, MLflow/Default Logger will log metrics and params
    under this ID. If it exists, the run status will change to running.
    This ID is also used for creating this run's output directory if
    ``output_dir`` is not specified (Run ID must be a 32-character hex string)."""

    use_mlflow: bool = False
    """Whether to use MLflow for tracking this run. If not installed, a message
    is shown"""

    mlflow_tracking_uri: str = 'mlruns/'
    mlflow_always_log_artifacts: bool = False


class CheckpointsConfig(BaseConfig):
    validation_steps: Union[float, PositiveInt] = 1.0
    """How often within one training epoch to check the validation set.
    If float, % of training epoch. If int, check every n batches."""

    save_top_k: int = 1
    """Save and keep only ``k`` best models according to main metric;
    -1 will keep all; 0 will never save a model."""

    early_stop_patience: int = 0
    """Stop training if evaluation metrics do not improve after X validations;
    0 disables this."""


class GPUConfig(BaseConfig):
    gpus: Union[int, List[int]] = 0
    """Use the number of GPUs specified if int, where 0 is no GPU. -1 is all GPUs.
    Alternatively, if a list, uses the GPU-ids specified (e.g., [0, 2])."""

    precision: Literal[16, 32] = 32
    """The floating point precision to be used while training the model. Available
    options are 32 or 16 bits."""

    amp_level: Literal['O0', 'O1', 'O2', 'O3'] = 'O0'
    """The automatic-mixed-precision level to use. O0 is FP32 training. 01 is mixed
    precision training as popularized by NVIDIA Apex. O2 casts the model weights to FP16
    but keeps certain master weights and batch norm in FP32 without patching Torch
    functions. 03 is full FP16 training."""

    @validator('gpus', pre=True, always=True)
    def setup_gpu_ids(cls, v):
        """If asking to use CPU, let it be, outputting a warning if GPUs are available.
        If asking to use any GPU but none are available, fall back to CPU and warn user.
        """
        import torch

        if v == 0:
            if torch.cuda.is_available():
                logger.info(
                    f'Asking to use CPU only, even though CUDA is available.'
                )
        elif v == -1 or isinstance(v, list) and v:
            if not torch.cuda.is_available():
                logger.warning(
                    f'Asking to use GPU {v}, but CUDA is not available. '
                    f'Falling back to CPU.'
                )
                return 0
        elif v > 0 and not torch.cuda.is_available():
            logger.warning(
                f'Asking to use {v} GPUs, but CUDA is not available. '
                f'Falling back to CPU.'
            )
            return 0

        return v

    @validator('precision', pre=False, always=True)
    def setup_amp_level(cls, v, values):
        """If precision is set to 16, amp_level needs to be greater than O0.
        Following the same logic, if amp_level is set to greater than O0, precision
        needs to be set to 16."""
        if values.get('amp_level') and values['amp_level'] > 'O0' and v == 32:
            logger.warning(
                f'Precision set to FP32 but AMP level set to {values["amp_level"]}. '
                f'Setting precision to FP16.'
            )
            return 16
        return v


class TrainerConfig(GPUConfig):
    resume: bool = False
    """Resume training a previous run.
    The `run.run_id` (and possibly `run.experiment_name`) option must be specified.
    Files are then searched under the "runs" directory. If not found, they are
    downloaded from the MLflow server (check the `mlflow_tracking_uri` option)."""

    epochs: int = 50
    """Number of epochs for training."""

    gradient_accumulation_steps: int = 1
    """Accumulate gradients for the given number of steps (batches) before
    back-propagating."""

    gradient_max_norm: float = 0.0
    """Clip gradients with norm above this value; by default (0.0), do not clip."""

    main_metric: Union[str, List[str]] = None
    """Choose Primary Metric for this run."""

    log_interval: int = 100
    """Log every k batches."""

    log_save_interval: int = 100
    """Save accumulated log every k batches (does not seem to
    matter to MLflow logging)."""

    checkpoint: CheckpointsConfig = CheckpointsConfig()

    deterministic: bool = True
    """If true enables cudnn.deterministic. Might make training slower, but ensures
    reproducibility."""


class Configuration(BaseConfig):
    run: RunConfig
    """Options specific to each run"""

    trainer: TrainerConfig
    data: WMTQEDataset.Config
    system: QESystem.Config

    debug: bool = False
    """Run training in `fast_dev_run` mode."""

    verbose: bool = False
    quiet: bool = False

    @validator('run', pre=True, always=True)
    def check_consistency(cls, v, values):
        if v is None:
            raise ValueError('Configuration for run is missing.')
        return v


def train_from_file(filename) -> 'TrainingRunInfo':
    """Load options from a config file and calls the training procedure.

    Arguments:
        filename: of the configuration file.

    Return:
        an object with training information.
    """
    config = file_to_configuration(filename)
    return train_from_configuration(config)


def train_from_configuration(configuration_dict) -> 'TrainingRunInfo':
    """Run the entire training pipeline using the configuration options received.

    Arguments:
        configuration_dict: dictionary with options.

    Return: object with training information.
    """
    config = Configuration(**configuration_dict)

    train_info = run(config)

    return train_info


def setup_run(
    config: RunConfig, debug=False, quiet=False, anchor_dir: Path = None
) -> Path:
    """Prepare for running the training pipeline.

    This includes setting up the output directory, random seeds, and loggers.

    Arguments:
        config: configuration options.
        quiet: whether to suppress info log messages.
        debug: whether to additionally log debug messages
               (:param:`quiet` has precedence)
        anchor_dir: directory to use as root for paths.

    Return:
         the resolved path to the output directory.
    """
    # Setup tracking logger
    if config.use_mlflow:
        tracking_logger = MLFlowTrackingLogger(
            experiment_name=config.experiment_name,
            run_id=config.run_id,
            tracking_uri=config.mlflow_tracking_uri,
            always_log_artifacts=config.mlflow_always_log_artifacts,
        )
        output_dir = Path(tracking_logger.local_artifacts_path)
    else:
        output_dir = config.output_dir
        if output_dir is None:
            output_dir = Path('runs') / generate_slug(config.experiment_name)
        output_dir.mkdir(parents=True, exist_ok=True)

    configure_seed(config.seed)

    logging.info(f'Local output directory is: {output_dir}')
    return output_dir


def run(
    config: Configuration,
    system_type: Union[Any, QESystem] = QESystem,
) -> 'TrainingRunInfo':
    """Instantiate the system according to the configuration and train it.

    Load or create a trained system, instantiate PyTorch-Lightning callbacks and
    loggers, and run the training procedure.

    Arguments:
        config: generic training options.
        system_type: class of system being used.

    Return:
        an object with training information.
    """
    output_dir = setup_run(config.run, config.debug, config.quiet)

    save_config_to_file(config, output_dir / 'train_config.yaml')

    # Data
    logger.info(f'Using training data from {config.data.train.input.source}')

    # Load or create the system
    if config.system.load:
        system = system_type.load(config.system.load)
    else:
        system = system_type.from_config(config.system, data_config=config.data)

    logger.info(f'Training system {system.__class__.__name__}')

    callbacks = []
    if config.trainer.checkpoint.early_stop_patience > 0:
        early_stop_callback = EarlyStopping(
            monitor='val_' + system.main_metric_name,
            min_delta=0.0,
            patience=config.trainer.checkpoint.early_stop_patience,
            verbose=True,
            mode='max' if system.main_metric_ordering == 'max' else 'min',
        )
        callbacks.append(early_stop_callback)

    checkpoint_callback = ModelCheckpoint(
        dirpath=output_dir / 'checkpoints',
        monitor='val_' + system.main_metric_name,
        save_top_k=config.trainer.checkpoint.save_top_k,
        mode='max' if system.main_metric_ordering == 'max' else 'min',
        save_last=True,
    )
    callbacks.append(checkpoint_callback)

    trainer = pl.Trainer(
        logger=False,
        gpus=config.trainer.gpus,
        max_epochs=config.trainer.epochs,
        min_epochs=1,
        fast_dev_run=config.debug,
        accumulate_grad_batches=config.trainer.gradient_accumulation_steps,
        gradient_clip_val=config.trainer.gradient_max_norm,
        callbacks=callbacks,
        progress_bar_refresh_rate=0 if config.quiet else 1,
        log_every_n_steps=config.trainer.log_interval,
        val_check_interval=config.trainer.checkpoint.validation_steps,
        num_sanity_val_steps=0,
        precision=config.trainer.precision,
        amp_backend='apex' if config.trainer.amp_level > 'O0' else 'native',
        amp_level=config.trainer.amp_level,
        deterministic=config.trainer.deterministic,
        distributed_backend='ddp' if isinstance(config.trainer.gpus, list) and len(config.trainer.gpus) > 1 else None,
    )

    trainer.fit(system)

    best_model_path = trainer.checkpoint_callback.best_model_path
    if not best_model_path:
        return TrainingRunInfo(
            model=trainer.model,
            best_metrics=None,
            best_model_path=None,
        )

    logger.info(f'Best model path: {best_model_path}')
    best_metrics = {
        name: value.item() if isinstance(value, torch.Tensor) else value
        for name, value in trainer.callback_metrics.items()
    }
    return TrainingRunInfo(
        model=trainer.model,
        best_metrics=best_metrics,
        best_model_path=best_model_path,
    )


class TrainingRunInfo:
    def __init__(self, model, best_metrics, best_model_path):
        self.model = model
        self.best_metrics = best_metrics
        self.best_model_path = best_model_path
