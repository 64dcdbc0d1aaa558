from __future__ import print_function

import argparse
import datetime
import dateutil.tz
import os
import pprint
import random
import sys

import numpy as np
import torch

from config import cfg, cfg_from_file
from utils import mkdir_p

dir_path = os.path.abspath(os.path.join(os.path.realpath(__file__), './.'))
sys.path.append(dir_path)


def parse_args():
    parser = argparse.ArgumentParser(description='Train a MAC network on CLEVR')
    parser.add_argument('--cfg', dest='cfg_file',
                        help='optional config file',
                        default='cfgs/clevr_train_mac.yml', type=str)
    parser.add_argument('--gpu', dest='gpu_id', type=str, default='0')
    parser.add_argument('--data_dir', dest='data_dir', type=str, default='')
    parser.add_argument('--manualSeed', type=int, help='manual seed')
    parser.add_argument('--eval', action='store_true', help='only evaluate a checkpoint')
    args = parser.parse_args()
    return args


def set_logdir(max_steps):
    now = datetime.datetime.now(dateutil.tz.tzlocal())
    timestamp = now.strftime('%Y_%m_%d_%H_%M_%S')
    logdir = "data/{}_max_steps_{}".format(timestamp, max_steps)
    mkdir_p(logdir)
    return logdir


if __name__ == "__main__":
    args = parse_args()
    if args.cfg_file is not None:
        cfg_from_file(args.cfg_file)
    if args.gpu_id != '-1':
        cfg.GPU_ID = args.gpu_id
    else:
        cfg.CUDA = False

    if args.data_dir != '':
        cfg.DATASET.DATA_DIR = args.data_dir
    print('Using config:')
    pprint.pprint(cfg)

    os.environ["CUDA_VISIBLE_DEVICES"] = cfg.GPU_ID

    if args.manualSeed is None:
        args.manualSeed = random.randint(1, 10000)
    random.seed(args.manualSeed)
    np.random.seed(args.manualSeed)
    torch.manual_seed(args.manualSeed)
    if cfg.CUDA:
        torch.cuda.manual_seed_all(args.manualSeed)

    logdir = set_logdir(cfg.TRAIN.MAX_STEPS)

    from trainer import Trainer
    trainer = Trainer(logdir, cfg)
    if args.eval:
        trainer.evaluate(cfg.TRAIN.RESUME)
    else:
        trainer.train()
