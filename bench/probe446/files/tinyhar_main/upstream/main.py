import argparse
import os
import random

import numpy as np
import torch
import yaml

from experiment import Exp
from dataloaders import data_set, data_dict


def get_args():
    parser = argparse.ArgumentParser(description='ISWC22 HAR experiments (TinyHAR and baselines)')

    # ---------------- basic ----------------
    parser.add_argument('--to_save_path', type=str, default='../Run_logs', help='where logs/checkpoints go')
    parser.add_argument('--root_path', type=str, default='../datasets', help='root path of the datasets')
    parser.add_argument('--data_name', type=str, default='hapt', help='dataset name, see configs/data.yaml')
    parser.add_argument('--model_type', type=str, default='tinyhar', help='tinyhar | deepconvlstm | attend | mcnn')
    parser.add_argument('--seed', type=int, default=1, help='random seed')
    parser.add_argument('--exp_mode', type=str, default='LOCV', help='LOCV | Given | SOCV | FOCV')

    # ---------------- training ----------------
    parser.add_argument('--train_epochs', type=int, default=150)
    parser.add_argument('--batch_size', type=int, default=256)
    parser.add_argument('--learning_rate', type=float, default=0.001)
    parser.add_argument('--learning_rate_patience', type=int, default=7)
    parser.add_argument('--learning_rate_factor', type=float, default=0.1)
    parser.add_argument('--early_stop_patience', type=int, default=15)
    parser.add_argument('--optimizer', type=str, default='Adam')
    parser.add_argument('--criterion', type=str, default='CrossEntropy')
    parser.add_argument('--mixup_probability', type=float, default=0.5)
    parser.add_argument('--mixup_alpha', type=float, default=0.5)
    parser.add_argument('--random_augmentation_prob', type=float, default=0.5)
    parser.add_argument('--windowsize', type=int, default=128)
    parser.add_argument('--displacement', type=int, default=64)
    parser.add_argument('--filter_scaling_factor', type=float, default=1.0)
    parser.add_argument('--sensor_select', nargs='+', default=None)

    # ---------------- device ----------------
    parser.add_argument('--use_gpu', type=bool, default=True, help='use gpu')
    parser.add_argument('--gpu', type=int, default=0, help='gpu index')
    parser.add_argument('--use_multi_gpu', action='store_true', help='use multiple gpus', default=False)
    parser.add_argument('--devices', type=str, default='0,1,2,3', help='device ids of multiple gpus')

    return parser.parse_args()


def fix_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


if __name__ == '__main__':
    args = get_args()

    args.use_gpu = True if torch.cuda.is_available() and args.use_gpu else False
    if args.use_gpu and args.use_multi_gpu:
        args.devices = args.devices.replace(' ', '')
        device_ids = args.devices.split(',')
        args.device_ids = [int(id_) for id_ in device_ids]
        args.gpu = args.device_ids[0]

    fix_seed(args.seed)

    # merge the dataset and model configs into the argparse namespace
    with open(os.path.join('configs', 'data.yaml'), mode='r') as f:
        data_config = yaml.load(f, Loader=yaml.FullLoader)[args.data_name]
    with open(os.path.join('configs', 'model.yaml'), mode='r') as f:
        model_config = yaml.load(f, Loader=yaml.FullLoader)[args.model_type]

    args.root_path = os.path.join(args.root_path, data_config['filename'])
    args.sampling_freq = data_config['sampling_freq']
    args.num_classes = data_config['num_classes']
    args.c_in = data_config['num_channels']
    args.input_length = args.windowsize
    args.model_config = model_config

    print('Args in experiment:')
    print(args)

    dataset = data_dict[args.data_name](args)
    exp = Exp(args)
    exp.train(dataset)
