import argparse
import os
import sys
import csv
import time
from datetime import datetime

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader

from data_loader import define_dataloader, load_embedding, load_data_split
from utils import str2bool, timeSince, get_performance_batchiter, print_performance, write_blackbox_output_batchiter
import data_io_tf

sys.path.append('../')

PRINT_EVERY_EPOCH = 1


def train(model, device, train_loader, optimizer, epoch):

    model.train()

    for batch in train_loader:

        x_pep, x_tcr, y = batch['pep'].to(device), batch['tcr'].to(device), batch['y'].to(device)

        optimizer.zero_grad()
        yhat = model(x_pep, x_tcr)
        y = y.unsqueeze(-1).expand_as(yhat)
        loss = F.binary_cross_entropy(yhat, y)
        loss.backward()
        optimizer.step()

    if epoch % PRINT_EVERY_EPOCH == 1:
        print('[TRAIN] Epoch {} Loss {:.4f}'.format(epoch, loss.item()))


def main():

    parser = argparse.ArgumentParser(description='Prediction of TCR binding to peptide-MHC complexes')

    parser.add_argument('--infile', type=str, help='Input file for training')
    parser.add_argument('--indepfile', type=str, default=None, help='Input file for independent testing')
    parser.add_argument('--blosum', type=str, default='data/blosum/BLOSUM45', help='File containing BLOSUM matrix to initialize embeddings')
    parser.add_argument('--batch_size', type=int, default=32, metavar='N', help='batch size')
    parser.add_argument('--model_name', type=str, default='original.ckpt', help='Model name to be saved/loaded for training/independent testing respectively')
    parser.add_argument('--epoch', type=int, default=200, metavar='N', help='number of epoch to train')
    parser.add_argument('--lr', type=float, default=0.001, metavar='LR', help='learning rate')
    parser.add_argument('--cuda', type=str2bool, default=True, help='enable cuda')
    parser.add_argument('--seed', type=int, default=1039, help='random seed')
    parser.add_argument('--mode', type=str, default='train', help='train or test')
    parser.add_argument('--save_model', type=str2bool, default=True, help='save model')
    parser.add_argument('--model', type=str, default='attention', help='Model to import')
    parser.add_argument('--drop_rate', type=float, default=0.25, help='dropout rate')
    parser.add_argument('--lin_size', type=int, default=1024, help='size of linear transformations')
    parser.add_argument('--padding', type=str, default='mid', help='front, end, mid, alignment')
    parser.add_argument('--heads', type=int, default=5, help='Multihead attention head')
    parser.add_argument('--max_len_tcr', type=int, default=20, help='maximum TCR length allowed')
    parser.add_argument('--max_len_pep', type=int, default=22, help='maximum peptide length allowed')
    parser.add_argument('--n_fold', type=int, default=5, help='number of cross-validation folds')
    parser.add_argument('--idx_test_fold', type=int, default=0, help='fold index for test set (0, ..., n_fold-1)')
    parser.add_argument('--idx_val_fold', type=int, default=-1, help='fold index for validation set (-1, 0, ..., n_fold-1). \
                            If -1, the option will be ignored \
                            If >= 0, the fold will be used as the validation set and excluded from training')
    parser.add_argument('--split_type', type=str, default='random', help='how to split the dataset (random, tcr, epitope)')
    args = parser.parse_args()

    if args.mode == 'test':
        assert args.indepfile is not None, '--indepfile is missing!'

    # Set Cuda
    if torch.cuda.is_available() and not args.cuda:
        print("WARNING: You have a CUDA device, so you should probably run with --cuda")
    args.cuda = args.cuda and torch.cuda.is_available()
    device = torch.device('cuda' if args.cuda else 'cpu')

    # Set random seed
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    if args.cuda:
        torch.cuda.manual_seed(args.seed)

    # Import model
    if args.model == 'attention':
        from attention import Net
    else:
        raise ValueError('unknown model name')

    # Read embedding matrix
    embedding_matrix = load_embedding(args.blosum)

    # Read data
    x_pep, x_tcr, bound = data_io_tf.read_pTCR_list(args.infile)
    x_pep, x_tcr, bound = np.array(x_pep), np.array(x_tcr), np.array(bound)

    idx_train, idx_test, idx_test_remove = load_data_split(x_pep, x_tcr, args)
    idx_val = None
    if args.idx_val_fold >= 0:
        idx_train, idx_val, _ = load_data_split(x_pep[idx_train], x_tcr[idx_train], args, fold=args.idx_val_fold)

    kwargs = {'num_workers': 1, 'pin_memory': True} if args.cuda else {}

    # Define dataloaders
    train_loader = define_dataloader(x_pep[idx_train], x_tcr[idx_train], bound[idx_train],
                                     maxlen_pep=args.max_len_pep, maxlen_tcr=args.max_len_tcr,
                                     padding=args.padding, batch_size=args.batch_size, device=device, **kwargs)
    test_loader = define_dataloader(x_pep[idx_test], x_tcr[idx_test], bound[idx_test],
                                    maxlen_pep=train_loader['pep_length'], maxlen_tcr=train_loader['tcr_length'],
                                    padding=args.padding, batch_size=args.batch_size, device=device, **kwargs)
    if idx_val is not None:
        val_loader = define_dataloader(x_pep[idx_val], x_tcr[idx_val], bound[idx_val],
                                       maxlen_pep=train_loader['pep_length'], maxlen_tcr=train_loader['tcr_length'],
                                       padding=args.padding, batch_size=args.batch_size, device=device, **kwargs)

    if args.indepfile is not None:
        x_indep_pep, x_indep_tcr, bound_indep = data_io_tf.read_pTCR_list(args.indepfile)
        x_indep_pep, x_indep_tcr, bound_indep = np.array(x_indep_pep), np.array(x_indep_tcr), np.array(bound_indep)
        indep_loader = define_dataloader(x_indep_pep, x_indep_tcr, bound_indep,
                                         maxlen_pep=train_loader['pep_length'],
                                         maxlen_tcr=train_loader['tcr_length'],
                                         padding=args.padding,
                                         batch_size=args.batch_size, device=device, **kwargs)

    if args.mode == 'test':

        model_name = args.model_name

        assert model_name in os.listdir('./models')

        model_name = './models/' + model_name
        model = Net(embedding_matrix, args).to(device)
        model.load_state_dict(torch.load(model_name, map_location=device))

        # evaluate and print independent-test-set performance
        print('[INDEP] {} ----------------')
        perf_indep = get_performance_batchiter(indep_loader['loader'], model, device)
        print_performance(perf_indep)

        # write blackbox output
        wf_bb_open = open('result/' + 'pred_' + args.model_name + '_' + os.path.basename(args.indepfile), 'w')
        wf_bb = csv.writer(wf_bb_open, delimiter='\t')
        write_blackbox_output_batchiter(indep_loader, model, wf_bb, device)
        wf_bb_open.close()

        exit(0)

    elif args.mode == 'train':

        model = Net(embedding_matrix, args).to(device)
        optimizer = optim.Adam(model.parameters(), lr=args.lr)

        # fix the random seed of training split
        lossArraySize = args.epoch

        # create the result file with the given header
        os.makedirs('result', exist_ok=True)
        wf_open = open('result/perf_' + os.path.splitext(os.path.basename(args.model_name))[0] + '.csv', 'w')
        wf_colnames = ['loss', 'accuracy',
                       'precision1', 'precision0',
                       'recall1', 'recall0',
                       'f1macro', 'f1micro', 'auc']
        wf = csv.DictWriter(wf_open, wf_colnames, delimiter='\t')

        t0 = time.time()
        for epoch in range(1, args.epoch + 1):

            train(model, device, train_loader['loader'], optimizer, epoch)

            # evaluate and print test-set performance
            print('[TEST ] {} ----------------'.format(epoch))
            perf_test = get_performance_batchiter(test_loader['loader'], model, device)
            print_performance(perf_test)
            wf.writerow({k: perf_test[k] for k in wf_colnames})
            wf_open.flush()

            if idx_val is not None:
                print('[VAL  ] {} ----------------'.format(epoch))
                perf_val = get_performance_batchiter(val_loader['loader'], model, device)
                print_performance(perf_val)

        print('training time: {}'.format(timeSince(t0)))
        wf_open.close()

        # evaluate and print independent-test-set performance
        if args.indepfile is not None:
            print('[INDEP] {} ----------------')
            perf_indep = get_performance_batchiter(indep_loader['loader'], model, device)
            print_performance(perf_indep)

        if args.save_model:
            os.makedirs('models', exist_ok=True)
            model_name = './models/' + os.path.splitext(args.model_name)[0] + '.ckpt'
            torch.save(model.state_dict(), model_name)

    else:
        print('\nError: "--mode train" or "--mode test" expected')


if __name__ == '__main__':
    main()
