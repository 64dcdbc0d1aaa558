##################################################
# Main script used to commence experiments
##################################################
# Author: Marius Bock
# Email: marius.bock(at)uni-siegen.de
##################################################

import argparse
import os
import time
import sys

import numpy as np
import pandas as pd
import torch

from data_processing.preprocess_data import load_dataset
from data_processing.sliding_window import apply_sliding_window
from model.train import cross_participant_cv, per_participant_cv, train_valid_split
from model.evaluate import evaluate_participant_scores
from misc.logging import Logger
from misc.torchutils import seed_torch


"""
DATASET OPTIONS:
- DATASET:
    - opportunity: Opportunity dataset
    - wetlab: Wetlab dataset
    - rwhar: RealWorld HAR dataset
    - sbhar: SBHAR dataset
    - hhar: HHAR dataset
- PRED_TYPE:
    - Opportunity: 'gestures' or 'locomotion'
    - Wetlab: 'actions' or 'tasks'
- CUTOFF_TYPE / CUTOFF_TRAIN / CUTOFF_VALID: only relevant for train_valid_split
- SW_LENGTH / SW_UNIT / SW_OVERLAP: sliding window settings
- INCLUDE_NULL: whether to include the null class in the experiment
"""


def parse_args():
    parser = argparse.ArgumentParser()

    # dataset settings
    parser.add_argument('--dataset', default='rwhar', type=str,
                        help='dataset to be used (rwhar, sbhar, wetlab or hhar)')
    parser.add_argument('--pred_type', default='actions', type=str,
                        help='prediction type for wetlab dataset (actions or tasks)')
    parser.add_argument('--include_null', default=False, action='store_true',
                        help='include null class in the experiment')
    parser.add_argument('--sw_length', default=1, type=float, help='length of sliding window')
    parser.add_argument('--sw_unit', default='seconds', type=str, help='unit in which length of window is measured')
    parser.add_argument('--sw_overlap', default=60, type=int, help='overlap of sliding window in percent')
    parser.add_argument('--valid_type', default='cross-participant', type=str,
                        help='validation type to be used (per-participant, cross-participant, train-valid-split)')
    parser.add_argument('--valid_epoch', default='best', type=str,
                        help='which epoch used for evaluation; either best or last')
    parser.add_argument('--cutoff_type', default='subject', type=str,
                        help='type how dataset is supposed to be split (subject, percentage or record)')
    parser.add_argument('--cutoff_train', default=3, type=int,
                        help='cutoff point for train dataset')
    parser.add_argument('--cutoff_valid', default=4, type=int,
                        help='cutoff point for validation dataset')

    # network settings
    parser.add_argument('--network', default='deepconvlstm', type=str, help='network to be used')
    parser.add_argument('--nb_units_lstm', default=128, type=int, help='number of units within each lstm layer')
    parser.add_argument('--nb_layers_lstm', default=1, type=int, help='number of lstm layers')
    parser.add_argument('--conv_block_type', default='normal', type=str,
                        help='type of convolution blocks employed (normal, skip, fixup)')
    parser.add_argument('--nb_conv_blocks', default=2, type=int, help='number of convolution blocks')
    parser.add_argument('--nb_filters', default=64, type=int, help='number of convolution filters')
    parser.add_argument('--filter_width', default=11, type=int, help='filter width')
    parser.add_argument('--dilation', default=1, type=int, help='dilation applied in convolution filters')
    parser.add_argument('--drop_prob', default=0.5, type=float, help='dropout probability before classifier')
    parser.add_argument('--pooling', default=False, action='store_true', help='apply pooling after convolutions')
    parser.add_argument('--batch_norm', default=False, action='store_true', help='apply batch normalisation')
    parser.add_argument('--reduce_layer', default=False, action='store_true', help='apply reduce layer')
    parser.add_argument('--reduce_layer_output', default=8, type=int, help='size of reduce layer output')
    parser.add_argument('--pool_type', default='max', type=str, help='type of pooling applied')
    parser.add_argument('--pool_kernel_width', default=2, type=int, help='kernel width of pooling')
    parser.add_argument('--no_lstm', default=False, action='store_true', help='remove lstm layers')
    parser.add_argument('--weights_init', default='xavier_normal', type=str, help='weight initialisation')

    # training settings
    parser.add_argument('--seed', default=1, type=int, help='seed to be employed')
    parser.add_argument('--epochs', default=30, type=int, help='no. epochs to use during training')
    parser.add_argument('--batch_size', default=100, type=int, help='batch size to use during training')
    parser.add_argument('--means_and_stds', default=False, action='store_true',
                        help='append means and stds of features to input')
    parser.add_argument('--loss', default='cross-entropy', type=str, help='loss to be used (e.g. cross-entropy)')
    parser.add_argument('--use_weights', default=False, action='store_true', help='use weighted loss')
    parser.add_argument('--weight_decay', default=0.000001, type=float, help='weight decay')
    parser.add_argument('--smoothing', default=0.0, type=float, help='label smoothing applied')
    parser.add_argument('--lr', default=1e-4, type=float, help='learning rate')
    parser.add_argument('--optimizer', default='adam', type=str, help='optimizer to be used')
    parser.add_argument('--adj_lr', default=False, action='store_true', help='adjust learning rate')
    parser.add_argument('--lr_step', default=10, type=int, help='period of learning rate decay')
    parser.add_argument('--lr_decay', default=0.9, type=float, help='multiplicative factor of lr decay')
    parser.add_argument('--early_stopping', default=False, action='store_true', help='use early stopping')
    parser.add_argument('--es_patience', default=5, type=int, help='patience for early stopping')
    parser.add_argument('--shuffling', default=False, action='store_true', help='shuffle training data')
    parser.add_argument('--gpu', default='cuda:0', type=str, help='gpu to be used (e.g. cuda:1)')

    # logging settings
    parser.add_argument('--save_test_preds', default=False, action='store_true', help='save test predictions')
    parser.add_argument('--save_model', default=False, action='store_true', help='save model checkpoints')
    parser.add_argument('--save_analysis', default=False, action='store_true', help='save analysis files')
    parser.add_argument('--logging', default=False, action='store_true', help='flag indicating logging')
    parser.add_argument('--print_freq', default=100, type=int, help='print frequency during training')
    parser.add_argument('--print_counts', default=False, action='store_true',
                        help='print class distribution of train and test set')
    parser.add_argument('--plot_gradient', default=False, action='store_true', help='plot gradient flow')

    args = parser.parse_args()
    return args


def main(args):
    ts = time.time()
    log_date = time.strftime('%Y%m%d', time.localtime(ts))
    log_timestamp = time.strftime('%H%M%S', time.localtime(ts))

    if args.logging:
        log_dir = os.path.join('logs', log_date, log_timestamp)
        os.makedirs(log_dir, exist_ok=True)
        sys.stdout = Logger(os.path.join(log_dir, 'log.txt'))
    else:
        log_dir = None

    # apply the chosen random seed to all relevant parts
    seed_torch(args.seed)

    # check that a GPU is actually present; otherwise train on the CPU (slow!)
    if args.gpu != 'cpu' and not torch.cuda.is_available():
        print('WARNING: requested {} but CUDA is not available - falling back to CPU.'.format(args.gpu))
        args.gpu = 'cpu'

    ################################################## DATA LOADING ##################################################

    print('Loading data...')
    X, y, nb_classes, class_names, sampling_rate, has_null = \
        load_dataset(dataset=args.dataset,
                     cutoff_type=args.cutoff_type,
                     cutoff_valid=args.cutoff_valid,
                     cutoff_train=args.cutoff_train,
                     pred_type=args.pred_type,
                     include_null=args.include_null)
    args.sampling_rate = sampling_rate
    args.nb_classes = nb_classes
    args.class_names = class_names
    args.has_null = has_null

    # if sliding window is measured in seconds, convert to number of samples
    if args.sw_unit == 'seconds':
        args.sw_length = int(args.sw_length * sampling_rate)
        args.sw_unit = 'units'

    config = vars(args)

    if args.print_counts:
        print('Class distribution (overall):')
        print(pd.Series(y).value_counts().sort_index())

    ############################################# TRAINING #############################################

    if args.valid_type == 'per-participant':
        trained_net = per_participant_cv(X, y, config, log_date, log_timestamp)
    elif args.valid_type == 'cross-participant':
        trained_net = cross_participant_cv(X, y, config, log_date, log_timestamp)
    elif args.valid_type == 'train-valid-split':
        trained_net = train_valid_split(X, y, config, log_date, log_timestamp)
    else:
        print('Did not choose a valid validation type; aborting.')
        sys.exit(1)

    if args.save_model:
        model_dir = os.path.join('logs', log_date, log_timestamp)
        os.makedirs(model_dir, exist_ok=True)
        torch.save(trained_net.state_dict(), os.path.join(model_dir, 'final_model.pth'))

    if args.save_analysis and log_dir is not None:
        evaluate_participant_scores(participant_scores=np.load(os.path.join(log_dir, 'participant_scores.npy')),
                                    gen_gap_scores=np.load(os.path.join(log_dir, 'gen_gap_scores.npy')),
                                    input_cm=np.load(os.path.join(log_dir, 'confusion_matrix.npy')),
                                    class_names=class_names,
                                    nb_subjects=len(np.unique(X[:, 0])),
                                    filepath=log_dir,
                                    filename='results',
                                    args=args)

    print('Experiment finished after {:.1f} minutes.'.format((time.time() - ts) / 60))


if __name__ == '__main__':
    main(parse_args())
