#!/usr/bin/env python3

import logging
import os
import sys
import traceback

os.environ['OMP_NUM_THREADS'] = '1'
os.environ['OPENBLAS_NUM_THREADS'] = '1'
os.environ['MKL_NUM_THREADS'] = '1'
os.environ['VECLIB_MAXIMUM_THREADS'] = '1'
os.environ['NUMEXPR_NUM_THREADS'] = '1'

import hydra
import torch
from omegaconf import OmegaConf
from pytorch_lightning import Trainer
from pytorch_lightning.callbacks import ModelCheckpoint, LearningRateMonitor
from pytorch_lightning.loggers import TensorBoardLogger
from pytorch_lightning.plugins import NativeMixedPrecisionPlugin
from pytorch_lightning.strategies import DDPStrategy

from saicinpainting.training.trainers import make_training_model
from saicinpainting.utils import register_debug_signal_handlers, handle_ddp_subprocess, handle_ddp_parent_process, \
    handle_deterministic_config

LOGGER = logging.getLogger(__name__)


def _resolve_devices(trainer_kwargs):
    """Translate the legacy `gpus:` / `accelerator: ddp` keys of our configs to the
    Lightning >= 1.6 accelerator/devices/strategy triple."""
    gpus = trainer_kwargs.pop('gpus', None)
    legacy_accelerator = trainer_kwargs.pop('accelerator', None)

    if gpus in (None, 0):
        trainer_kwargs['accelerator'] = 'cpu'
        trainer_kwargs['devices'] = 1
        return trainer_kwargs

    trainer_kwargs['accelerator'] = 'gpu'
    if gpus == -1:
        trainer_kwargs['devices'] = torch.cuda.device_count()
    else:
        trainer_kwargs['devices'] = gpus

    if legacy_accelerator == 'ddp' and trainer_kwargs['devices'] > 1:
        trainer_kwargs['strategy'] = DDPStrategy(find_unused_parameters=False,
                                                 process_group_backend='nccl',
                                                 static_graph=False)
    return trainer_kwargs


def _precision_plugins(trainer_kwargs):
    precision = trainer_kwargs.pop('precision', 32)
    plugins = []
    if precision == 16:
        # FFC spectral blocks keep fp32 internally (see ffc.py); everything else
        # runs under autocast with a conservative initial loss scale.
        scaler = torch.cuda.amp.GradScaler(init_scale=2.**14, growth_interval=1000)
        plugins.append(NativeMixedPrecisionPlugin(16, 'cuda', scaler=scaler))
    trainer_kwargs.pop('amp_backend', None)
    return plugins


@handle_ddp_subprocess()
@hydra.main(config_path='../configs/training', config_name='tiny_test.yaml')
def main(config: OmegaConf):
    try:
        need_set_deterministic = handle_deterministic_config(config)

        register_debug_signal_handlers()  # kill -10 <pid> will result in traceback dumped into log

        is_in_ddp_subprocess = handle_ddp_parent_process()

        config.visualizer.outdir = os.path.join(os.getcwd(), config.visualizer.outdir)
        if not is_in_ddp_subprocess:
            LOGGER.info(OmegaConf.to_yaml(config))
            OmegaConf.save(config, os.path.join(os.getcwd(), 'config.yaml'))

        checkpoints_dir = os.path.join(os.getcwd(), 'models')
        os.makedirs(checkpoints_dir, exist_ok=True)

        # there is no need to suppress this logger in ddp, because it handles rank on its own
        metrics_logger = TensorBoardLogger(config.location.tb_dir, name=os.path.basename(os.getcwd()))
        metrics_logger.log_hyperparams(config)

        training_model = make_training_model(config)

        trainer_kwargs = OmegaConf.to_container(config.trainer.kwargs, resolve=True)
        if need_set_deterministic:
            trainer_kwargs['deterministic'] = True

        trainer_kwargs = _resolve_devices(trainer_kwargs)
        plugins = _precision_plugins(trainer_kwargs)

        trainer = Trainer(
            # there is no need to suppress checkpointing in ddp, because it handles rank on its own
            callbacks=[ModelCheckpoint(dirpath=checkpoints_dir, **config.trainer.checkpoint_kwargs),
                       LearningRateMonitor(logging_interval='step')],
            logger=metrics_logger,
            default_root_dir=os.getcwd(),
            plugins=plugins,
            **trainer_kwargs
        )
        trainer.fit(training_model)
    except KeyboardInterrupt:
        LOGGER.warning('Interrupted by user')
    except Exception as ex:
        LOGGER.critical(f'Training failed due to {ex}:\n{traceback.format_exc()}')
        sys.exit(1)


if __name__ == '__main__':
    main()
