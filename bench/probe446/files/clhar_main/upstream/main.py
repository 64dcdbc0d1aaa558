# encoding=utf-8
"""
Contrastive self-supervised learning for wearable HAR: pre-train an encoder with one of
SimCLR / BYOL / SimSiam / NNCLR / TS-TCC / TPN / CPC, then fine-tune / linear-evaluate it.
"""
import argparse
import os

import numpy as np
import torch
import fitlog

from trainer import setup_seed, setup_dataloaders, setup, train, test, lr_finetune, delete_files
from models.loss import NTXentLoss, SupConLoss


parser = argparse.ArgumentParser(description='argument setting of network')
parser.add_argument('--cuda', default=0, type=int, help='cuda device ID，0/1')
# hyperparameter
parser.add_argument('--batch_size', type=int, default=64, help='batch size of training')
parser.add_argument('--n_epoch', type=int, default=60, help='number of training epochs')
parser.add_argument('--lr', type=float, default=1e-3, help='learning rate')
parser.add_argument('--lr_cls', type=float, default=1e-3, help='learning rate for linear classifier')
parser.add_argument('--weight_decay', type=float, default=0.0, help='weight decay')
parser.add_argument('--seed', type=int, default=10, help='random seed')

# dataset
parser.add_argument('--dataset', type=str, default='ucihar', choices=['oppor', 'ucihar', 'shar', 'hhar'],
                    help='name of dataset')
parser.add_argument('--n_feature', type=int, default=77, help='name of feature dimension')
parser.add_argument('--len_sw', type=int, default=30, help='length of sliding window')
parser.add_argument('--n_class', type=int, default=18, help='number of class')
parser.add_argument('--cases', type=str, default='random',
                    choices=['random', 'subject', 'subject_large', 'cross_device', 'joint_device'],
                    help='name of scenarios')
parser.add_argument('--split_ratio', type=float, default=0.2,
                    help='split ratio of test/val: train(0.64), val(0.16), test(0.2)')
parser.add_argument('--device', type=str, default='Phones', choices=['Phones', 'Watch'],
                    help='data of which device to use (random case); data of which device to be used as training data '
                         '(cross-device case, data from the other device as test data)')
parser.add_argument('--target_domain', type=str, default='0',
                    help='the target domain, [0 to 29] for ucihar, [1,2,3,5,6,9,11,13,14,15,16,17,19,20,21,22,23,24,25,29] for shar, [a-i] for hhar')

# augmentation
parser.add_argument('--aug1', type=str, default='jit_scal',
                    choices=['na', 'noise', 'scale', 'negate', 'perm', 'shuffle', 't_flip', 't_warp', 'resample',
                             'rotation', 'perm_jit', 'jit_scal', 'hfc', 'lfc', 'p_shift', 'ap_p', 'ap_f'],
                    help='the type of augmentation transformation')
parser.add_argument('--aug2', type=str, default='resample',
                    choices=['na', 'noise', 'scale', 'negate', 'perm', 'shuffle', 't_flip', 't_warp', 'resample',
                             'rotation', 'perm_jit', 'jit_scal', 'hfc', 'lfc', 'p_shift', 'ap_p', 'ap_f'],
                    help='the type of augmentation transformation')

# framework
parser.add_argument('--framework', type=str, default='byol',
                    choices=['byol', 'simsiam', 'simclr', 'nnclr', 'tstcc', 'tpn', 'supcon', 'cpc'],
                    help='name of framework')
parser.add_argument('--backbone', type=str, default='DCL',
                    choices=['FCN', 'DCL', 'LSTM', 'AE', 'CNN_AE', 'Transformer'], help='name of backbone network')
parser.add_argument('--criterion', type=str, default='cos_sim', choices=['cos_sim', 'NTXent'],
                    help='type of loss function for contrastive learning')
parser.add_argument('--p', type=int, default=128,
                    help='byol: projector size, simsiam: projector output size, simclr: projector output size')
parser.add_argument('--phid', type=int, default=128,
                    help='byol: projector hidden size, simsiam: predictor hidden size, simclr: na')

# log
parser.add_argument('--logdir', type=str, default='log/', help='log directory')

# byol
parser.add_argument('--lr_mul', type=float, default=10.0,
                    help='lr multiplier for the second optimizer when training byol')
parser.add_argument('--EMA', type=float, default=0.996, help='exponential moving average parameter')

# nnclr
parser.add_argument('--mmb_size', type=int, default=1024, help='maximum size of NNCLR support set')

# TS-TCC
parser.add_argument('--lambda1', type=float, default=1.0,
                    help='weight for temporal contrastive loss')
parser.add_argument('--lambda2', type=float, default=1.0,
                    help='weight for contextual contrastive loss, also used as the weight for reconstruction loss when AE or CAE being backbone network')
parser.add_argument('--temp_unit', type=str, default='tsfm', choices=['tsfm', 'lstm', 'blstm', 'gru', 'bgru'],
                    help='temporal unit in the TS-TCC')

# plot
parser.add_argument('--plt', type=bool, default=False, help='if or not to plot results')


############### Parser done ################

if __name__ == '__main__':
    args = parser.parse_args()
    DEVICE = torch.device('cuda:' + str(args.cuda) if torch.cuda.is_available() else 'cpu')
    print('device:', DEVICE, 'dataset:', args.dataset)

    setup_seed(args.seed)

    # fitlog keeps one folder per run; hyper-parameters are logged for the comparison tables
    fitlog.set_log_dir(args.logdir)
    fitlog.add_hyper(args)
    fitlog.add_hyper_in_file(__file__)

    train_loaders, val_loader, test_loader = setup_dataloaders(args)

    if args.framework in ['byol', 'simsiam']:
        model, optimizers, schedulers, criterion, logger, fitlog, classifier, criterion_cls, optimizer_cls = \
            setup(args, DEVICE)
    elif args.framework == 'supcon':
        model, optimizers, schedulers, _, logger, fitlog, classifier, criterion_cls, optimizer_cls = \
            setup(args, DEVICE)
        criterion = SupConLoss(temperature=0.1)
    else:
        model, optimizers, schedulers, criterion, logger, fitlog, classifier, criterion_cls, optimizer_cls = \
            setup(args, DEVICE)
        if args.criterion == 'NTXent':
            criterion = NTXentLoss(DEVICE, args.batch_size, temperature=0.1)

    # self-supervised pre-training
    model_path = train(train_loaders, val_loader, model, logger, fitlog, DEVICE, optimizers, schedulers,
                       criterion, args)

    # reload the best pre-trained encoder and evaluate it
    best_pretrain_model = test(test_loader, model_path, logger, fitlog, DEVICE, criterion, args)

    ############################################################################################################

    trained_backbone = lr_finetune(best_pretrain_model, classifier, train_loaders, val_loader, test_loader,
                                   criterion_cls, optimizer_cls, logger, fitlog, DEVICE, args)

    if args.plt:
        from trainer import tsne, mds
        tsne(trained_backbone, test_loader, DEVICE, save_dir=os.path.join(args.logdir, 'tsne.png'))
        mds(trained_backbone, test_loader, DEVICE, save_dir=os.path.join(args.logdir, 'mds.png'))

    delete_files(args)
    fitlog.finish()
