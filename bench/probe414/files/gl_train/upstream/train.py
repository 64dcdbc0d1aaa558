import os
import argparse

parser = argparse.ArgumentParser(description='Train GaitGL')
parser.add_argument('--dataset', default='CASIA-B', choices=['CASIA-B', 'OUMVLP'], type=str,
                    help='dataset to train on. Default: CASIA-B')
parser.add_argument('--dataset_path', default='/data/CASIA-B-64', type=str,
                    help='root of the pretreated silhouettes (64x44)')
parser.add_argument('--gpus', default='0,1,2,3', type=str,
                    help='comma separated list of GPU ids to use. Default: 0,1,2,3')
parser.add_argument('--batch_size', default=[8, 8], nargs=2, type=int,
                    help='P x K for the triplet sampler. Default: 8 8')
parser.add_argument('--lr', default=1e-4, type=float, help='learning rate. Default: 1e-4')
parser.add_argument('--total_iter', default=80000, type=int, help='total training iterations. Default: 80000')
parser.add_argument('--restore_iter', default=0, type=int, help='resume from this iteration. Default: 0')
parser.add_argument('--frame_num', default=30, type=int, help='frames sampled per sequence. Default: 30')
parser.add_argument('--num_workers', default=8, type=int)
parser.add_argument('--cache', default=False, action='store_true',
                    help='load all the training data into memory before training starts')
parser.add_argument('--seed', default=2020, type=int)
opt = parser.parse_args()

# must be set before torch is imported, otherwise all GPUs are initialised
os.environ['CUDA_VISIBLE_DEVICES'] = opt.gpus

import random
import numpy as np
import torch
import torch.backends.cudnn as cudnn

from model.data_loader import load_data
from model.model import Model


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)


def main():
    set_seed(opt.seed)
    cudnn.benchmark = True

    pid_num = 73 if opt.dataset == 'CASIA-B' else 5153
    train_source, test_source = load_data(opt.dataset_path, 64, opt.dataset, pid_num,
                                          pid_shuffle=False, cache=opt.cache)
    if opt.cache:
        print('Loading training data...')
        train_source.load_all_data()

    save_name = '_'.join(map(str, ['GaitGL', opt.dataset, pid_num, opt.lr,
                                   opt.batch_size[0] * opt.batch_size[1], opt.frame_num]))
    m = Model(lr=opt.lr,
              num_workers=opt.num_workers,
              batch_size=tuple(opt.batch_size),
              restore_iter=opt.restore_iter,
              total_iter=opt.total_iter,
              save_name=save_name,
              train_pid_num=pid_num,
              frame_num=opt.frame_num,
              model_name='GaitGL',
              train_source=train_source,
              test_source=test_source,
              dataset=opt.dataset)

    print('Training START (visible GPUs: {})'.format(opt.gpus))
    m.fit()
    print('Training COMPLETE')


if __name__ == '__main__':
    main()
