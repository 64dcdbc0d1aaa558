import os
import argparse
import random

import yaml
import numpy as np
import torch

from tools import Runner
from misc import obj


def parse_arg():
    parser = argparse.ArgumentParser(description='HuPR: human pose estimation from mmWave radar')
    parser.add_argument('--config', type=str, default='mscsa_prgcn.yaml', help='name of the config file in ./config')
    parser.add_argument('--dir', type=str, default='mscsa_prgcn', help='directory of saved models and logs under ./logs')
    parser.add_argument('--gpuIDs', type=str, default='0', help='comma separated list of GPU ids')
    parser.add_argument('--eval', action='store_true', help='evaluate on the test split')
    parser.add_argument('--keypoints', action='store_true', help='dump predicted keypoints for visualisation')
    parser.add_argument('--loadModel', type=str, default=None, help='directory of the checkpoint to resume/evaluate')
    parser.add_argument('--vis', action='store_true')
    parser.add_argument('--sampling_ratio', type=int, default=1)
    args = parser.parse_args()
    return args


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)


if __name__ == '__main__':
    args = parse_arg()
    with open(os.path.join('./config', args.config), 'r') as f:
        cfg = yaml.safe_load(f)
    cfg = obj(cfg)

    # restrict the job to the requested cards before anything touches CUDA
    os.environ['CUDA_VISIBLE_DEVICES'] = args.gpuIDs
    cfg.SETUP.numGPU = len(args.gpuIDs.split(','))
    set_seed(cfg.SETUP.seed)

    runner = Runner(args, cfg)
    if args.eval:
        runner.loadModelWeight('test')
        runner.eval(visualization=args.vis)
    else:
        if args.loadModel is not None:
            runner.loadModelWeight('train')
        runner.train()
