#!/usr/bin/env python3
"""MiliPoint command line: train / test / eval point-cloud models on mmWave radar data.

    ./mm.py train mmr_act dgcnn --save-name dgcnn_act -w 0 -b 128 -e 200
    ./mm.py test  mmr_act dgcnn --load-name dgcnn_act
"""
import argparse
import logging
import os
import sys

import torch
import pytorch_lightning as pl

from mmrnet.dataset import get_dataset
from mmrnet.models import model_map
from mmrnet.session import train, test

logging.basicConfig(level=logging.INFO, format='%(asctime)s %(levelname)s %(message)s')
logger = logging.getLogger('milipoint')


def build_parser():
    p = argparse.ArgumentParser(description='MiliPoint benchmark')
    p.add_argument('action', choices=['train', 'test', 'eval'])
    p.add_argument('dataset', choices=['mmr_kp', 'mmr_iden', 'mmr_act'],
                   help='keypoint estimation / identification / action classification')
    p.add_argument('model', choices=list(model_map.keys()))
    p.add_argument('--dataset-config', default=None, help='yaml file with stacking / zero-padding options')
    p.add_argument('--save-name', default=None)
    p.add_argument('--load-name', default=None)
    p.add_argument('-a', '--accelerator', default='gpu', help='lightning accelerator: cpu, gpu')
    p.add_argument('-n', '--num-devices', type=int, default=1, help='number of GPUs')
    p.add_argument('-s', '--strategy', default='ddp', help='lightning strategy when num-devices > 1')
    p.add_argument('-w', '--num-workers', type=int, default=0)
    p.add_argument('-b', '--batch-size', type=int, default=128)
    p.add_argument('-e', '--max-epochs', type=int, default=100)
    p.add_argument('-lr', '--learning-rate', type=float, default=1e-3)
    p.add_argument('--weight-decay', type=float, default=0.0)
    p.add_argument('--optimizer', default='adam', choices=['adam', 'sgd', 'adamw'])
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--precision', default='32', help='32, 16-mixed, bf16-mixed')
    p.add_argument('--debug', action='store_true')
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    pl.seed_everything(args.seed, workers=True)

    if args.accelerator == 'gpu' and not torch.cuda.is_available():
        logger.warning('No CUDA device found, falling back to CPU')
        args.accelerator = 'cpu'
    if args.accelerator == 'gpu':
        torch.set_float32_matmul_precision('high')
        logger.info('Using %d x %s', args.num_devices, torch.cuda.get_device_name(0))

    train_loader, val_loader, test_loader, info = get_dataset(
        args.dataset, args.dataset_config, batch_size=args.batch_size,
        num_workers=args.num_workers, debug=args.debug)

    model_cls = model_map[args.model]
    model = model_cls(info=info)

    plt_trainer_args = dict(
        max_epochs=args.max_epochs,
        accelerator=args.accelerator,
        devices=args.num_devices,
        precision=args.precision,
        log_every_n_steps=20,
        deterministic=False)

    save_path = os.path.join('checkpoints', args.save_name) if args.save_name else None
    load_path = os.path.join('checkpoints', args.load_name) if args.load_name else None

    if args.action == 'train':
        train(model, train_loader, val_loader, optimizer=args.optimizer,
              learning_rate=args.learning_rate, weight_decay=args.weight_decay,
              plt_trainer_args=plt_trainer_args, save_path=save_path,
              strategy=args.strategy, num_devices=args.num_devices, task=info['task'])
        if test_loader is not None and save_path is not None:
            test(model, test_loader, plt_trainer_args=plt_trainer_args,
                 load_path=os.path.join(save_path, 'best.ckpt'), task=info['task'])
    elif args.action in ('test', 'eval'):
        assert load_path is not None, '--load-name is required for testing'
        test(model, test_loader, plt_trainer_args=plt_trainer_args,
             load_path=os.path.join(load_path, 'best.ckpt'), task=info['task'])


if __name__ == '__main__':
    sys.exit(main())
