# -*- coding: utf-8 -*-
import sys
sys.path.append('../')
import os
import argparse
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

from model.RNNModel import DKT
from data.dataloader import getTrainLoader, getTestLoader, getLoader
from Constant import Constants as C
from evaluation import eval


def parse_args():
    parser = argparse.ArgumentParser(description='Deep Knowledge Tracing')
    parser.add_argument('--dataset', type=str, default=C.DATASET)
    parser.add_argument('--epochs', type=int, default=C.EPOCH)
    parser.add_argument('--lr', type=float, default=C.LR)
    parser.add_argument('--hidden', type=int, default=C.HIDDEN)
    parser.add_argument('--layers', type=int, default=C.LAYERS)
    parser.add_argument('--rnn', type=str, default='rnn', choices=['rnn', 'lstm', 'gru'])
    parser.add_argument('--optim', type=str, default='adagrad', choices=['adam', 'adagrad'])
    parser.add_argument('--vector_loss', action='store_true', help='use the vectorised loss (much faster on GPU)')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--save_dir', type=str, default='checkpoints')
    parser.add_argument('--export_states', action='store_true', help='save per-step mastery of the best model')
    return parser.parse_args()


def export_knowledge_states(model, loaders, path, max_students=200):
    """Dump the predicted mastery of every question after each step (for the heat-map figures)."""
    model.eval()
    device = next(model.parameters()).device
    states = []
    with torch.no_grad():
        for loader in loaders:
            for batch in loader:
                pred = model(batch.to(device))
                states.append(pred.cpu().numpy())
                if sum(s.shape[0] for s in states) >= max_students:
                    break
    states = np.concatenate(states, axis=0)[:max_students]
    np.save(path, states)
    print('saved knowledge states %s to %s' % (states.shape, path))


def main():
    args = parse_args()
    print('Dataset: ' + args.dataset + ', Learning Rate: ' + str(args.lr) + '\n')

    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True

    if not torch.cuda.is_available():
        sys.exit('DKT training script requires a CUDA GPU')

    model = DKT(C.INPUT, args.hidden, args.layers, C.OUTPUT, rnn_type=args.rnn)
    model = model.cuda()
    if torch.cuda.device_count() > 1:
        print("Let's use", torch.cuda.device_count(), "GPUs!")
        model = nn.DataParallel(model)

    if args.optim == 'adam':
        optimizer = optim.Adam(model.parameters(), lr=args.lr)
    else:
        optimizer = optim.Adagrad(model.parameters(), lr=args.lr)

    if args.vector_loss:
        lossFunc = eval.VectorLossFunc().cuda()
    else:
        lossFunc = eval.lossFunc()

    trainLoaders, testLoaders = getLoader(args.dataset)

    os.makedirs(args.save_dir, exist_ok=True)
    best_auc = 0.0
    for epoch in range(args.epochs):
        print('epoch: ' + str(epoch))
        start = time.time()
        model, optimizer = eval.train(trainLoaders, model, optimizer, lossFunc)
        print('train time: %.1fs' % (time.time() - start))
        auc = eval.test(testLoaders, model)
        if auc > best_auc:
            best_auc = auc
            state = model.module.state_dict() if isinstance(model, nn.DataParallel) else model.state_dict()
            torch.save(state, os.path.join(args.save_dir, 'dkt_%s_best.pt' % args.dataset))
    print('best auc: %.4f' % best_auc)

    if args.export_states:
        net = model.module if isinstance(model, nn.DataParallel) else model
        net.load_state_dict(torch.load(os.path.join(args.save_dir, 'dkt_%s_best.pt' % args.dataset)))
        export_knowledge_states(net, testLoaders, os.path.join(args.save_dir, 'states_%s.npy' % args.dataset))


if __name__ == '__main__':
    main()
