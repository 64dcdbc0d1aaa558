import math
import logging
import random
import datetime
from pathlib import Path

import numpy as np
import torch
import torch.distributed as distributed
import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, open_dict

from cutie.model.trainer import Trainer
from cutie.dataset.setup_training_data import setup_pre_training_datasets, setup_main_training_datasets
from cutie.utils.logger import TensorboardLogger

log = logging.getLogger()


def distributed_setup():
    distributed.init_process_group(backend="nccl")
    local_rank = distributed.get_rank()
    world_size = distributed.get_world_size()
    log.info(f'Initialized: local_rank={local_rank}, world_size={world_size}')
    return local_rank, world_size


def info_if_rank_zero(msg):
    if local_rank == 0:
        log.info(msg)


def seed_everything(seed: int) -> None:
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


@hydra.main(version_base='1.3.2', config_path='config', config_name='train_config.yaml')
def train(cfg: DictConfig):
    # initial setup
    global local_rank
    local_rank, world_size = distributed_setup()
    num_gpus = world_size
    run_dir = HydraConfig.get().run.dir
    info_if_rank_zero(f'All configuration: {cfg}')
    info_if_rank_zero(f'Number of detected GPUs: {num_gpus}')
    info_if_rank_zero(f'Visible CUDA devices on this node: {torch.cuda.device_count()}')

    # cuda setup
    torch.cuda.set_device(local_rank)
    if cfg.cudnn_benchmark:
        torch.backends.cudnn.benchmark = True

    # number of dataloader workers
    info_if_rank_zero(f'Number of dataloader workers (per GPU): {cfg.num_workers}')

    # wrap python logger with a tensorboard logger
    log = TensorboardLogger(run_dir, logging.getLogger(), enabled_tb=(local_rank == 0))

    # training stages
    stages = list(cfg.stages)
    info_if_rank_zero(f'Training stages: {stages}')

    model_in_memory = None
    for stage in stages:
        if stage == 'pretrain':
            stage_cfg = cfg.pre_training
        elif stage == 'main':
            stage_cfg = cfg.main_training
        else:
            raise NotImplementedError(f'Unknown stage {stage}')

        # merge the stage-specific config
        with open_dict(stage_cfg):
            stage_cfg.name = stage
            stage_cfg.amp = cfg.amp
            stage_cfg.num_workers = cfg.num_workers
            stage_cfg.exp_id = cfg.exp_id
            stage_cfg.batch_size = stage_cfg.batch_size // num_gpus
        info_if_rank_zero(f'Batch size per GPU: {stage_cfg.batch_size}')

        # determinism
        seed = cfg.seed + local_rank * 100 + (0 if stage == 'pretrain' else 1)
        seed_everything(seed)

        # construct the trainer
        trainer = Trainer(cfg, stage_cfg, log=log, run_path=run_dir, local_rank=local_rank,
                          world_size=world_size)

        # load previous checkpoint if needed
        if cfg['checkpoint'] is not None:
            curr_iter = trainer.load_checkpoint(cfg['checkpoint'])
            cfg['checkpoint'] = None
            info_if_rank_zero('Model checkpoint loaded!')
        else:
            curr_iter = 0

        # load previous network weights if needed
        if model_in_memory is not None:
            trainer.load_weights_in_memory(model_in_memory)
            model_in_memory = None
            info_if_rank_zero('Model weight loaded from the previous stage!')
        elif cfg['weights'] is not None:
            trainer.load_weights(cfg['weights'])
            cfg['weights'] = None
            info_if_rank_zero('Model weight loaded!')

        # setup datasets
        if stage == 'pretrain':
            dataset, sampler, loader = setup_pre_training_datasets(stage_cfg)
            info_if_rank_zero(f'Number of training samples: {len(dataset)}')
        else:
            datasets, samplers, loaders = setup_main_training_datasets(stage_cfg)
            dataset, sampler, loader = datasets[0], samplers[0], loaders[0]
            info_if_rank_zero(f'Number of training datasets: {len(datasets)}')

        # determine time to change max skip
        total_iterations = stage_cfg['num_iterations']
        iterations_per_epoch = len(loader)
        total_epoch = math.ceil(total_iterations / iterations_per_epoch)
        current_epoch = curr_iter // iterations_per_epoch
        info_if_rank_zero(f'We will approximately use {total_epoch} epochs.')

        # training loop
        try:
            # Need this to select random bases in different workers
            np.random.seed(np.random.randint(2**30 - 1) + local_rank * 1000)
            while curr_iter < total_iterations:
                # Crucial for randomness!
                sampler.set_epoch(current_epoch)
                current_epoch += 1
                log.debug(f'Current epoch: {current_epoch}')

                trainer.train()
                for data in loader:
                    trainer.do_pass(data, curr_iter)
                    curr_iter += 1

                    if curr_iter >= total_iterations:
                        break
        finally:
            if not cfg.debug:
                trainer.save_weights(curr_iter)
                trainer.save_checkpoint(curr_iter)

        model_in_memory = trainer.cutie.module.state_dict()
        del trainer
        torch.cuda.empty_cache()

    distributed.destroy_process_group()


if __name__ == '__main__':
    train()
