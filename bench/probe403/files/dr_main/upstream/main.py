import os
import sys
import random

import hydra
import torch
import numpy as np
import torch.distributed as dist
import torch.multiprocessing as mp
from omegaconf import OmegaConf
from torch.utils.tensorboard import SummaryWriter

from train import train, evaluate, build_grad_scaler
from utils.func import *
from utils.metrics import Estimator
from data.builder import generate_dataset
from modules.builder import generate_model


@hydra.main(config_path="configs", config_name="eyepacs", version_base=None)
def main(cfg):
    # print configuration
    print_msg('LOADING CONFIG FILE')
    print(OmegaConf.to_yaml(cfg))

    # create folder
    save_path = cfg.base.save_path
    if os.path.exists(save_path):
        if cfg.base.overwrite:
            print_msg('Save path {} exists and will be overwrited.'.format(save_path), warning=True)
        else:
            new_save_path = add_path_suffix(save_path)
            cfg.base.save_path = new_save_path
            warning = 'Save path {} exists. New save path is set to be {}.'.format(save_path, new_save_path)
            print_msg(warning, warning=True)

    os.makedirs(cfg.base.save_path, exist_ok=True)
    OmegaConf.save(config=cfg, f=os.path.join(cfg.base.save_path, 'cfg.yaml'))

    if cfg.base.random_seed < 0:
        cfg.base.random_seed = random.randint(0, 1000000)

    if cfg.dist.distributed:
        if cfg.dist.n_gpus is None:
            cfg.dist.n_gpus = torch.cuda.device_count()
        cfg.dist.world_size = cfg.dist.n_gpus * cfg.dist.nodes
        mp.spawn(worker, nprocs=cfg.dist.n_gpus, args=(cfg,))
    else:
        worker(0, cfg)


def worker(gpu, cfg):
    if cfg.dist.distributed:
        cfg.dist.gpu = gpu
        cfg.dist.rank = cfg.dist.get('node_rank', 0) * cfg.dist.n_gpus + gpu
        dist.init_process_group(
            backend=cfg.dist.backend,
            init_method='tcp://{}:{}'.format(cfg.dist.master_address, cfg.dist.master_port),
            world_size=cfg.dist.world_size,
            rank=cfg.dist.rank
        )
        torch.cuda.set_device(gpu)
        cfg.base.device = 'cuda:{}'.format(gpu)
        cfg.train.batch_size = int(cfg.train.batch_size / cfg.dist.n_gpus)
        cfg.train.num_workers = int((cfg.train.num_workers + cfg.dist.n_gpus - 1) / cfg.dist.n_gpus)

    set_random_seed(cfg.base.random_seed + get_rank(cfg), cfg.base.cudnn_deterministic)
    if is_main(cfg):
        log_path = os.path.join(cfg.base.save_path, 'log')
        logger = SummaryWriter(log_path)
        print_msg('Training on {} ({} visible devices)'.format(
            torch.cuda.get_device_name(cfg.dist.get('gpu', 0) or 0), torch.cuda.device_count()))
    else:
        logger = None

    # train
    model = generate_model(cfg)
    train_dataset, test_dataset, val_dataset = generate_dataset(cfg)
    estimator = Estimator(cfg.train.metrics, cfg.data.num_classes, cfg.train.criterion)
    scaler = build_grad_scaler(cfg)
    train(
        cfg=cfg,
        model=model,
        train_dataset=train_dataset,
        val_dataset=val_dataset,
        estimator=estimator,
        logger=logger,
        scaler=scaler
    )

    # test
    if is_main(cfg):
        print('This is the performance of the best validation model:')
        checkpoint = os.path.join(cfg.base.save_path, 'best_validation_weights.pt')
        cfg.train.checkpoint = checkpoint
        model = generate_model(cfg)
        evaluate(cfg, model, test_dataset, estimator)

        print('This is the performance of the final model:')
        checkpoint = os.path.join(cfg.base.save_path, 'final_weights.pt')
        cfg.train.checkpoint = checkpoint
        model = generate_model(cfg)
        evaluate(cfg, model, test_dataset, estimator)

    if cfg.dist.distributed:
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
