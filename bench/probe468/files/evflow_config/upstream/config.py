"""Command line options for the PyTorch re-implementation of EV-FlowNet.

Defaults follow the original TensorFlow release (Zhu et al., RSS 2018) where possible.
"""
import argparse
import os

import torch


def configs():
    parser = argparse.ArgumentParser(description='EV-FlowNet: self-supervised optical flow from event cameras')

    # Data
    parser.add_argument('--data_path', type=str, default='data/mvsec/',
                        help='Directory with the MVSEC *_data.hdf5 / *_gt.hdf5 files.')
    parser.add_argument('--train_bag', type=str, default='outdoor_day2',
                        help='Sequence used for training.')
    parser.add_argument('--test_sequence', type=str, default='outdoor_day1',
                        help='Sequence used for evaluation.')
    parser.add_argument('--image_height', type=int, default=256)
    parser.add_argument('--image_width', type=int, default=256)
    parser.add_argument('--skip_frames', type=int, default=1,
                        help='dt between the two grayscale frames (1 or 4, as in the paper).')
    parser.add_argument('--count_only', action='store_true', default=False,
                        help='Only use event counts, no timestamp channels.')
    parser.add_argument('--time_only', action='store_true', default=False,
                        help='Only use timestamp channels, no event counts.')

    # Training
    parser.add_argument('--batch_size', type=int, default=8)
    parser.add_argument('--num_epochs', type=int, default=300)
    parser.add_argument('--initial_learning_rate', type=float, default=1e-5)
    parser.add_argument('--learning_rate_decay', type=float, default=0.9)
    parser.add_argument('--smoothness_weight', type=float, default=0.5)
    parser.add_argument('--no_batch_norm', action='store_true', default=False)
    parser.add_argument('--num_workers', type=int, default=4)
    parser.add_argument('--seed', type=int, default=1)

    # Logging / checkpoints
    parser.add_argument('--summary_path', type=str, default='runs/',
                        help='Tensorboard log directory.')
    parser.add_argument('--checkpoint_path', type=str, default='checkpoints/')
    parser.add_argument('--load_path', type=str, default=None,
                        help='Checkpoint to resume from / to evaluate.')
    parser.add_argument('--log_interval', type=int, default=100)
    parser.add_argument('--save_interval', type=int, default=5,
                        help='Save a checkpoint every N epochs.')

    # Test-time options
    parser.add_argument('--save_test_output', action='store_true', default=False)
    parser.add_argument('--test_plot', action='store_true', default=False)

    # Hardware
    parser.add_argument('--gpu', type=str, default='0',
                        help='Comma separated list of CUDA device ids, e.g. "0,1".')
    parser.add_argument('--no_cuda', action='store_true', default=False,
                        help='Disables CUDA training.')

    args = parser.parse_args()

    args.cuda = not args.no_cuda and torch.cuda.is_available()
    args.gpu_ids = [int(i) for i in args.gpu.split(',') if i != '']

    if not os.path.exists(args.checkpoint_path):
        os.makedirs(args.checkpoint_path)

    return args
