# Run a baseline model in BasicTS framework.
# pylint: disable=wrong-import-position
import os
import sys
from argparse import ArgumentParser

sys.path.append(os.path.abspath(__file__ + '/../..'))
import torch
import basicts

torch.set_num_threads(4) # aviod high cpu avg usage


def parse_args():
    parser = ArgumentParser(description='Run time series forecasting model in BasicTS framework!')
    # parser.add_argument('-c', '--cfg', default='baselines/STGCN/PEMS08.py', help='training config')
    # parser.add_argument('-c', '--cfg', default='baselines/D2STGNN/METR-LA.py', help='training config')
    parser.add_argument('-c', '--cfg', default='baselines/STID/METR-LA.py', help='training config')
    parser.add_argument('-g', '--gpus', default='0', help='visible gpus')
    parser.add_argument('--node_rank', default=0, type=int, help='node rank for multi-node training')
    return parser.parse_args()


def main():
    args = parse_args()
    if not torch.cuda.is_available():
        print('[BasicTS] CUDA is not available, training will run on CPU; '
              'set CFG.GPU_NUM = 0 in {} to silence this warning.'.format(args.cfg))
    basicts.launch_training(args.cfg, args.gpus, node_rank=args.node_rank)


if __name__ == '__main__':
    main()
