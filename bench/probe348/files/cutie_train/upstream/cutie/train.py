import math
import logging
import os
import random
from os import path

import git
import hydra
import numpy as np
import torch
import torch.distributed as distributed
from omegaconf import DictConfig, open_dict
from hydra.core.hydra_config import HydraConfig

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


@hydra.main(version_base='1.3.2', config_path='config', config_name='train_config.yaml')
def train(cfg: DictConfig):
    # initial setup
    num_gpus = world_size
    run_dir = HydraConfig.get().run.dir
    torch.cuda.set_device(local_rank)
    torch.backends.cudnn.benchmark = cfg.cudnn_benchmark
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    info_if_rank_zero(f'All configuration: {cfg}')
    info_if_rank_zero(f'Number of detected GPUs: {num_gpus}')

    # cuda device info, logged once for bug reports
    if local_rank == 0:
        props = torch.cuda.get_device_properties(local_rank)
        log.info(f'Device 0: {props.name}, {props.total_memory / 2**30:.1f} GiB, '
                 f'capability {props.major}.{props.minor}')

    # number of dataloader workers
    info_if_rank_zero(f'Number of CPU cores: {os.cpu_count()}')
    with open_dict(cfg):
        cfg.num_workers = min(cfg.num_workers, os.cpu_count() // num_gpus)
    info_if_rank_zero(f'Number of dataloader workers (per GPU): {cfg.num_workers}')

    # wrap python logger with a tensorboard logger
    tb_log = TensorboardLogger(run_dir, logging.getLogger(), enabled_tb=(local_rank == 0))

    # training stages
    stages = cfg.stages
    stages_to_perform = list(stages)
    for si, stage in enumerate(stages_to_perform):
        # Set seed to ensure the same initialization
        torch.manual_seed(cfg.seed)
        np.random.seed(cfg.seed)
        random.seed(cfg.seed)
        torch.cuda.manual_seed_all(cfg.seed)

        # Pick stage specific hyperparameters out
        stage_cfg = cfg[stage]
        stage_cfg.num_workers = cfg.num_workers

        # construct the trainer
        trainer = Trainer(cfg, stage_cfg, log=tb_log, run_path=run_dir).train()

        # load previous checkpoint if needed
        if cfg['checkpoint'] is not None:
            curr_iter = trainer.load_checkpoint(cfg['checkpoint'])
            cfg['checkpoint'] = None
            info_if_rank_zero('Model checkpoint loaded!')
        else:
            curr_iter = 0

        # load previous network weights if needed
        if cfg['weights'] is not None:
            trainer.load_weights(cfg['weights'])
            cfg['weights'] = None
            info_if_rank_zero('Model weights loaded!')

        # determine time to change max skip
        total_iterations = stage_cfg['num_iterations']
        if 'max_skip_schedule' in stage_cfg:
            max_skip_schedule = stage_cfg['max_skip_schedule']
            max_skip_change_iters = [int(total_iterations * x) for x in stage_cfg['max_skip_iter']]
        else:
            max_skip_schedule = [stage_cfg['max_skip']]
            max_skip_change_iters = []

        # setup datasets
        if stage == 'pre_training':
            dataset, sampler, loader = setup_pre_training_datasets(cfg, local_rank, world_size)
        elif stage == 'main_training':
            dataset, sampler, loader = setup_main_training_datasets(cfg, local_rank, world_size, max_skip_schedule[0])
        else:
            raise NotImplementedError

        # determine the number of epochs
        total_epoch = math.ceil(total_iterations / len(loader))
        current_epoch = curr_iter // len(loader)
        log.info(f'We will approximately use {total_epoch} epochs.')

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
                    # Update skip if needed
                    if stage != 'pre_training' and len(max_skip_change_iters) > 0 and curr_iter >= max_skip_change_iters[0]:
                        while curr_iter >= max_skip_change_iters[0]:
                            max_skip = max_skip_schedule[0]
                            max_skip_schedule = max_skip_schedule[1:]
                            max_skip_change_iters = max_skip_change_iters[1:]
                            if len(max_skip_change_iters) == 0:
                                break
                        info_if_rank_zero(f'Changing max skip to {max_skip=}')
                        _, sampler, loader = setup_main_training_datasets(cfg, local_rank, world_size, max_skip)
                        break

                    trainer.do_pass(data, curr_iter)
                    curr_iter += 1

                    if curr_iter >= total_iterations:
                        break
        finally:
            if not cfg.debug:
                trainer.save_weights(curr_iter)
                trainer.save_checkpoint(curr_iter)

        torch.cuda.empty_cache()
        distributed.barrier()
        log.info(f'Max GPU memory allocated: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB')

    distributed.destroy_process_group()


if __name__ == '__main__':
    local_rank, world_size = distributed_setup()
    train()
