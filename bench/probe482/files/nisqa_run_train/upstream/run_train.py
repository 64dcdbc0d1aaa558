# -*- coding: utf-8 -*-
"""
@author: Gabriel Mittag, TU-Berlin

Train a NISQA model from a YAML config:

    python run_train.py --yaml config/train_nisqa.yaml
"""
import argparse
import yaml

import torch

from nisqa.NISQA_model import nisqaModel

parser = argparse.ArgumentParser()
parser.add_argument('--yaml', required=True, type=str, help='YAML file with config')
parser.add_argument('--seed', type=int, default=None, help='optional random seed')

args = parser.parse_args()

with open(args.yaml, "r") as ymlfile:
    args_yaml = yaml.load(ymlfile, Loader=yaml.FullLoader)

args = {**args_yaml, **vars(args)}

if args.get('seed') is not None:
    torch.manual_seed(args['seed'])

nisqa = nisqaModel(args)
nisqa.train()
