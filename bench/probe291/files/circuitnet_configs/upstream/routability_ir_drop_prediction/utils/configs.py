# Copyright 2022 CircuitNet. All rights reserved.

import argparse
import os
import sys

sys.path.append(os.getcwd())


def parse_gpu_ids(value):
    """'0,1,3' -> [0, 1, 3]; an empty string means CPU."""
    if value is None or value == '':
        return []
    return [int(x) for x in str(value).split(',') if x.strip() != '']


class Parser(object):
    def __init__(self):
        self.parser = argparse.ArgumentParser()
        self.parser.add_argument('--task', default='congestion_gpdl')

        self.parser.add_argument('--save_path', default='work_dir/congestion_gpdl/')

        self.parser.add_argument('--pretrained', default=None)

        self.parser.add_argument('--max_iters', type=int, default=200000)
        self.parser.add_argument('--save_freq', type=int, default=10000)
        self.parser.add_argument('--plot_roc', action='store_true')
        self.parser.add_argument('--arg_file', default=None)
        self.parser.add_argument('--cpu', action='store_true', help='run on CPU even if a GPU is available')
        self.parser.add_argument('--gpu_ids', type=parse_gpu_ids, default='0',
                                 help='comma separated GPU ids, e.g. 0,1; exported as CUDA_VISIBLE_DEVICES')
        self.parser.add_argument('--amp', action='store_true', help='mixed precision training (fp16 autocast)')
        self.parser.add_argument('--seed', type=int, default=42)
        self.parser.add_argument('--deterministic', action='store_true')
        self.get_remainder()

    def get_remainder(self):
        if self.parser.parse_known_args()[0].task == 'congestion_gpdl':
            self.parser.add_argument('--dataroot', default='../../training_set/congestion')
            self.parser.add_argument('--ann_file_train', default='./files/train_N28.csv')
            self.parser.add_argument('--ann_file_test', default='./files/test_N28.csv')
            self.parser.add_argument('--dataset_type', default='CongestionDataset')
            self.parser.add_argument('--batch_size', type=int, default=16)
            self.parser.add_argument('--aug_pipeline', default=['Flip'])

            self.parser.add_argument('--model_type', default='GPDL')
            self.parser.add_argument('--in_channels', type=int, default=3)
            self.parser.add_argument('--out_channels', type=int, default=1)
            self.parser.add_argument('--lr', type=float, default=2e-4)
            self.parser.add_argument('--weight_decay', type=float, default=0)
            self.parser.add_argument('--loss_type', default='MSELoss')
            self.parser.add_argument('--eval-metric', default=['NRMS', 'SSIM', 'EMD'])

        elif self.parser.parse_known_args()[0].task == 'drc_routenet':
            self.parser.add_argument('--dataroot', default='../../training_set/DRC')
            self.parser.add_argument('--ann_file_train', default='./files/train_N28.csv')
            self.parser.add_argument('--ann_file_test', default='./files/test_N28.csv')
            self.parser.add_argument('--dataset_type', default='DRCDataset')
            self.parser.add_argument('--batch_size', type=int, default=8)
            self.parser.add_argument('--aug_pipeline', default=['Flip'])

            self.parser.add_argument('--model_type', default='RouteNet')
            self.parser.add_argument('--in_channels', type=int, default=9)
            self.parser.add_argument('--out_channels', type=int, default=1)
            self.parser.add_argument('--lr', type=float, default=2e-4)
            self.parser.add_argument('--weight_decay', type=float, default=1e-4)
            self.parser.add_argument('--loss_type', default='MSELoss')
            self.parser.add_argument('--eval-metric', default=['NRMS', 'SSIM'])
            self.parser.add_argument('--threshold', type=float, default=0.1)

        elif self.parser.parse_known_args()[0].task == 'irdrop_mavi':
            self.parser.add_argument('--dataroot', default='../../training_set/IR_drop')
            self.parser.add_argument('--ann_file_train', default='./files/train_N28.csv')
            self.parser.add_argument('--ann_file_test', default='./files/test_N28.csv')
            self.parser.add_argument('--dataset_type', default='IRDropDataset')
            self.parser.add_argument('--batch_size', type=int, default=2)

            self.parser.add_argument('--model_type', default='MAVI')
            self.parser.add_argument('--in_channels', type=int, default=1)
            self.parser.add_argument('--out_channels', type=int, default=4)
            self.parser.add_argument('--lr', type=float, default=2e-4)
            self.parser.add_argument('--weight_decay', type=float, default=1e-2)
            self.parser.add_argument('--loss_type', default='L1Loss')
            self.parser.add_argument('--eval-metric', default=['NRMS', 'SSIM'])
            self.parser.add_argument('--threshold', type=float, default=0.9885)  # 5% after normalization
        else:
            raise ValueError

    def parse_args(self):
        arg = self.parser.parse_args()
        if not arg.cpu and len(arg.gpu_ids) > 0:
            # must happen before the first CUDA call so that the ids passed to
            # nn.DataParallel are relative to the visible set
            os.environ['CUDA_VISIBLE_DEVICES'] = ','.join(str(i) for i in arg.gpu_ids)
            arg.gpu_ids = list(range(len(arg.gpu_ids)))
        if arg.cpu:
            arg.gpu_ids = []
        return arg
