import logging
import math
import os
from pathlib import Path
from shutil import rmtree
from typing import List, cast

import torch
from omegaconf import DictConfig, OmegaConf

from nuplan.planning.training.data_loader.datamodule import DataModule
from nuplan.planning.utils.multithreading.worker_pool import WorkerPool

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

    # Finalize the configuration and make it non-editable.
    OmegaConf.set_struct(cfg, True)

    # Log the final configuration after all overrides, interpolations and updates.
    if cfg.log_config:
        logger.info(f'Creating experiment name [{cfg.experiment}] in group [{cfg.group}] with config...')
        logger.info('\n' + OmegaConf.to_yaml(cfg))


def update_config_for_simulation(cfg: DictConfig) -> None:
    """
    Updates the config based on some conditions.
    :param cfg: omegaconf dictionary that is used to run the experiment.
    """
    # Make the configuration editable.
    OmegaConf.set_struct(cfg, False)
    if cfg.max_number_of_workers:
        # In case simulation is running in multi-threaded way perform the following
        # Remove the locally dependent callbacks
        callbacks: List[DictConfig] = []
        for callback in cfg.callback.values():
            is_serial_callback: bool = callback._target_.endswith('SerializationCallback')
            if not is_serial_callback:
                callbacks.append(callback)
        cfg.callback = callbacks

    # An ML planner running inside Ray workers needs a fraction of a GPU per worker
    if cfg.get('ml_planner_gpu_fraction', None) is not None and not torch.cuda.is_available():
        logger.warning('ml_planner_gpu_fraction is set but no GPU is available; ML planners will run on the CPU')
        cfg.ml_planner_gpu_fraction = None

    # Save all interpolations and remove keys that were only used for interpolation and have no further use.
    OmegaConf.resolve(cfg)

    # Finalize the configuration and make it non-editable.
    OmegaConf.set_struct(cfg, True)

    # Log the final configuration after all overrides, interpolations and updates.
    if cfg.log_config:
        logger.info(f'Creating experiment: {cfg.experiment}')
        logger.info('\n' + OmegaConf.to_yaml(cfg))


def update_config_for_nuboard(cfg: DictConfig) -> None:
    """
    Updates the config based on some conditions.
    :param cfg: omegaconf dictionary that is used to run the experiment.
    """
    # Make the configuration editable.
    OmegaConf.set_struct(cfg, False)

    if cfg.simulation_path is None:
        cfg.simulation_path = []
    elif not (isinstance(cfg.simulation_path, list) or OmegaConf.is_list(cfg.simulation_path)):
        cfg.simulation_path = [cfg.simulation_path]

    # Save all interpolations and remove keys that were only used for interpolation and have no further use.
    OmegaConf.resolve(cfg)

    # Finalize the configuration and make it non-editable.
    OmegaConf.set_struct(cfg, True)

    # Log the final configuration after all overrides, interpolations and updates.
    if cfg.log_config:
        logger.info('\n' + OmegaConf.to_yaml(cfg))


def get_num_gpus_used(cfg: DictConfig) -> int:
    """
    Gets the number of gpus used in ddp by searching through the environment variables WORLD_SIZE,
    PL_TRAINER_GPUS and NUM_NODES.
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
                'The WORLD_SIZE environment variable (nuplan) and the trainer gpus setting are not set; '
                'using all available GPUs on every node.'
            )
            num_gpus_per_node = torch.cuda.device_count()
            num_nodes = int(os.getenv('NUM_NODES', 1))
            num_gpus = num_gpus_per_node * num_nodes
        else:  # if trainer gpus is not -1
            logger.info(f'Trainer gpus found to be set to {trainer_num_gpus}.')
            num_gpus = trainer_num_gpus

    num_gpus = int(num_gpus)
    logger.info(f'Number of gpus found to be in use: {num_gpus}')
    return num_gpus


def get_num_batches_per_epoch(datamodule: DataModule, cfg: DictConfig) -> int:
    """Number of training batches each ddp process sees per epoch."""
    num_train_samples = int(len(datamodule._splitter.get_train_samples(datamodule._all_samples, None))
                            * datamodule._train_fraction)
    num_gpus = max(get_num_gpus_used(cfg), 1)
    return math.ceil(num_train_samples / (cfg.data_loader.params.batch_size * num_gpus))


def scale_cfg_for_distributed_training(cfg: DictConfig, datamodule: DataModule, worker: WorkerPool) -> DictConfig:
    """
    Adjusts parameters in cfg for ddp.
    :param cfg: Config with parameters for instantiation.
    :param datamodule: Datamodule which will be used for updating the lr_scheduler parameters.
    :param worker: Worker pool, unused here.
    :return cfg: Updated config.
    """
    number_gpus = get_num_gpus_used(cfg)

    # Setup learning rate and momentum schedulers
    OmegaConf.set_struct(cfg, False)
    if cfg.lightning.distributed_training.equal_variance_scaling_strategy:
        cfg.optimizer.lr = cfg.optimizer.lr * math.sqrt(number_gpus)
    else:
        cfg.optimizer.lr = cfg.optimizer.lr * number_gpus

    if 'lr_scheduler' in cfg and 'steps_per_epoch' in cfg.lr_scheduler:
        cfg.lr_scheduler.steps_per_epoch = get_num_batches_per_epoch(datamodule, cfg)
        cfg.lr_scheduler.max_lr = cfg.optimizer.lr

    OmegaConf.set_struct(cfg, True)
    logger.info(f'Optimizer and LR scheduler scaled for {number_gpus} GPUs: lr={cfg.optimizer.lr}')
    return cfg
