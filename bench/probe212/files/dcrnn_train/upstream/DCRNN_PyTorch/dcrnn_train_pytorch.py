from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import argparse
import os
import random

import numpy as np
import torch
import yaml

from lib.utils import load_graph_data
from model.pytorch.dcrnn_supervisor import DCRNNSupervisor


def set_random_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.cuda.manual_seed_all(seed)


def main(args):
    with open(args.config_filename) as f:
        supervisor_config = yaml.load(f, Loader=yaml.FullLoader)

        if args.gpu_id is not None:
            # restrict the process to one card before the first CUDA call
            os.environ['CUDA_VISIBLE_DEVICES'] = str(args.gpu_id)

        if args.seed is not None:
            set_random_seed(args.seed)

        graph_pkl_filename = supervisor_config['data'].get('graph_pkl_filename')
        sensor_ids, sensor_id_to_ind, adj_mx = load_graph_data(graph_pkl_filename)

        supervisor = DCRNNSupervisor(adj_mx=adj_mx, **supervisor_config)

        supervisor.train()


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--config_filename', default=None, type=str,
                        help='Configuration filename for restoring the model.')
    parser.add_argument('--use_cpu_only', default=False, type=bool, help='Set to true to only use cpu.')
    parser.add_argument('--gpu_id', default=None, type=int, help='Which GPU to train on (sets CUDA_VISIBLE_DEVICES).')
    parser.add_argument('--seed', default=None, type=int, help='Random seed for numpy / torch.')
    args = parser.parse_args()
    main(args)
