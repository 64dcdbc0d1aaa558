import logging
import os
from pathlib import Path
from shutil import rmtree
from typing import cast

import torch
from omegaconf import DictConfig, OmegaConf

from nuplan.planning.script.builders.utils.utils_type import is_target_type
from nuplan.planning.simulation.callback.timing_callback import TimingCallback
from nuplan.planning.utils.multithreading.worker_ray import RayDistributed

logger = logging.getLogger(__name__)


def update_config_for_training(cfg: DictConfig) -> None:
    """
    Updates the config based on some conditions.
    :param cfg: omegaconf dictionary that is used to run the experiment.
    """
    # Make the configuration editable.
    OmegaConf.set_struct(cfg, False)

    if cfg.cache.cache_path is None:
        logger.warning('Parameter cache_path is not set, caching is disabled')
    else:
        if not str(cfg.cache.cache_path).startswith('s3://'):
            if cfg.cache.cleanup_cache and Path(cfg.cache.cache_path).exists():
                rmtree(cfg.cache.cache_path)

            Path(cfg.cache.cache_path).mkdir(parents=True, exist_ok=True)

    if cfg.lightning.trainer.overfitting.enable:
        cfg.data_loader.params.num_workers = 0

    if cfg.gpu and torch.cuda.is_available():
        cfg.lightning.trainer.params.gpus = -1
    else:
        cfg.lightning.trainer.params.gpus = None
        cfg.lightning.trainer.params.accelerator = None
        cfg.lightning.trainer.params.precision = 32

    # Save all interpolations and remove keys that were only used for interpolation and have no further use.
    OmegaConf.resolve(cfg)

    # Finalize the configuration and make it read-only.
    OmegaConf.set_struct(cfg, True)

    # Log the final configuration after all overrides, interpolations and updates.
    if cfg.log_config:
        logger.info(f'Creating experiment name [{cfg.experiment}] in group [{cfg.group}] with config...')
        logger.info('\n' + OmegaConf.to_yaml(cfg))


def update_config_for_simulation(cfg: DictConfig) -> None:
    """
    Updates the config based on some conditions.
    :param cfg: DictConfig. Configuration that is used to run the experiment.
    """
    # Make the configuration editable.
    OmegaConf.set_struct(cfg, False)
    if cfg.max_number_of_workers:
        # In case simulation is running in multi-threaded way perform the following
        # Remove the locally run metric engine and callbacks which are not needed
        cfg.callbacks = [callback for callback in cfg.callback.values() if not is_target_type(callback, TimingCallback)]

    # Save all interpolations and remove keys that were only used for interpolation and have no further use.
    OmegaConf.resolve(cfg)

    # Finalize the configuration and make it read-only.
    OmegaConf.set_struct(cfg, True)

    # Log the final configuration after all overrides, interpolations and updates.
    if cfg.log_config:
        logger.info('\n' + OmegaConf.to_yaml(cfg))


def get_num_gpus_used(cfg: DictConfig) -> int:
    """
    Gets the number of gpus used in ddp by searching through the environment variable WORLD_SIZE, PytorchLightning Trainer specified number of GPUs, and torch.cuda.device_count() in that order.
    :param cfg: Config with experiment parameters.
    :return num_gpus: Number of gpus used in ddp.
    """
    num_gpus = os.getenv('WORLD_SIZE', -1)

    if num_gpus == -1:  # if environment variable WORLD_SIZE is not set, find from trainer
        logger.info('WORLD_SIZE was not set.')
        trainer_num_gpus = cfg.lightning.trainer.params.gpus

        if isinstance(trainer_num_gpus, str):
            raise RuntimeError('Error, please specify gpus as integer. Received string.')

        trainer_num_gpus = cast(int, trainer_num_gpus)

        if trainer_num_gpus == -1:  # if trainer gpus = -1, all gpus are used, so find all available devices
            logger.info(
                'PytorchLightning Trainer gpus was set to -1, finding number of GPUs used from torch.cuda.device_count().'
            )
            cuda_num_gpus = torch.cuda.device_count() * int(os.getenv('NUM_NODES', 1))
            num_gpus = cuda_num_gpus

        else:  # if trainer gpus is not -1
            logger.info(f'Trainer gpus was set to {trainer_num_gpus}, using this as the number of gpus.')
            num_gpus = trainer_num_gpus

    num_gpus = int(num_gpus)
    logger.info(f'Number of gpus found to be in use: {num_gpus}')
    return num_gpus


def get_num_workers_per_gpu(cfg: DictConfig) -> int:
    """
    Number of dataloader workers per GPU process: the CPUs of one node split across its GPUs.
    :param cfg: Config with experiment parameters.
    :return: number of workers.
    """
    num_cpus = os.cpu_count() or 1
    gpus_per_node = max(get_num_gpus_used(cfg) // int(os.getenv('NUM_NODES', 1)), 1)
    return max(num_cpus // gpus_per_node - 1, 1)


def scale_cfg_for_distributed_training(
    cfg: DictConfig, datamodule: 'pl.LightningDataModule', worker: RayDistributed
) -> DictConfig:
    """
    Adjusts parameters in cfg for ddp.
    :param cfg: Config with parameters for instantiation.
    :param datamodule: Datamodule which will be used for updating the lr_scheduler parameters.
    :param worker: Worker used to run the caching / feature building.
    :return cfg: Updated config.
    """
    number_gpus = get_num_gpus_used(cfg)

    # Setup learning rate and momentum schedulers
    if is_target_type(cfg.lr_scheduler, torch.optim.lr_scheduler.OneCycleLR):
        num_train_samples = int(
            len(datamodule._splitter.get_train_samples(datamodule._all_samples, worker)) * datamodule._train_fraction
        )

        cfg.lr_scheduler.steps_per_epoch = (num_train_samples // cfg.data_loader.params.batch_size) // number_gpus
        cfg.lr_scheduler.max_lr = cfg.optimizer.lr * number_gpus
        logger.info(
            f'Updated learning rate scheduler config to: max_lr {cfg.lr_scheduler.max_lr}, '
            f'steps_per_epoch {cfg.lr_scheduler.steps_per_epoch}'
        )

    if cfg.lightning.distributed_backend in ('ddp', 'ddp_spawn') and number_gpus > 1:
        cfg.optimizer.lr = cfg.optimizer.lr * (number_gpus ** 0.5)
        logger.info(f'Scaled optimizer lr by sqrt({number_gpus}) for {cfg.lightning.distributed_backend}')

    if cfg.data_loader.params.num_workers is None:
        cfg.data_loader.params.num_workers = get_num_workers_per_gpu(cfg)

    return cfg
