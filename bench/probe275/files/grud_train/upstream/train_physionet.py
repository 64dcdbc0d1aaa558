#!/usr/bin/env python
# -*- coding: utf-8 -*-
"""Train GRU-D on the PhysioNet/CinC 2012 in-hospital mortality task.

    python train_physionet.py --data ./data/physionet2012_grud.npz --hidden 64 --epochs 60

The .npz is produced by prepare_physionet.py and contains X (N, T, D) with NaN for missing values,
the static descriptors and the outcome labels.
"""
import argparse
import os
import time
import copy

import numpy as np
import torch
import torch.utils.data as utils
from torch.autograd import Variable
from sklearn.metrics import roc_auc_score, average_precision_score

from models.grud import GRUDClassifier, compute_x_mean


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--data', default='./data/physionet2012_grud.npz')
    p.add_argument('--hidden', type=int, default=64)
    p.add_argument('--dropout', type=float, default=0.3)
    p.add_argument('--batch_size', type=int, default=64)
    p.add_argument('--lr', type=float, default=1e-3)
    p.add_argument('--epochs', type=int, default=60)
    p.add_argument('--patience', type=int, default=10)
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--fold', type=int, default=0, help='which of the 5 CV folds to hold out')
    p.add_argument('--save', default='./checkpoints/grud_physionet.pt')
    return p.parse_args()


def PrepareDataset(X, static, y, idx_train, idx_valid, idx_test, BATCH_SIZE=64):
    """Build the 4-channel GRU-D tensor [X, X_last_obsv, Mask, Delta] and the three DataLoaders."""
    N, T, D = X.shape
    Mask = (~np.isnan(X)).astype(np.float32)
    X_filled = np.nan_to_num(X, nan=0.0).astype(np.float32)

    # time since last observation (hours), per variable
    Delta = np.zeros_like(X_filled)
    for t in range(1, T):
        Delta[:, t, :] = np.where(Mask[:, t - 1, :] > 0, 1.0, Delta[:, t - 1, :] + 1.0)

    # forward-filled values
    X_last_obsv = np.copy(X_filled)
    for t in range(1, T):
        X_last_obsv[:, t, :] = np.where(Mask[:, t, :] > 0, X_filled[:, t, :], X_last_obsv[:, t - 1, :])

    data = np.stack([X_filled, X_last_obsv, Mask, Delta], axis=1)  # (N, 4, T, D)
    data = torch.from_numpy(data)
    static = torch.from_numpy(static.astype(np.float32))
    labels = torch.from_numpy(y.astype(np.float32))

    def make(idx, shuffle):
        ds = utils.TensorDataset(data[idx], static[idx], labels[idx])
        return utils.DataLoader(ds, batch_size=BATCH_SIZE, shuffle=shuffle, drop_last=shuffle)

    return make(idx_train, True), make(idx_valid, False), make(idx_test, False), \
        compute_x_mean(X_filled[idx_train], Mask[idx_train])


def evaluate(model, loader, use_gpu):
    model.eval()
    ys, ps = [], []
    with torch.no_grad():
        for inputs, static, labels in loader:
            if use_gpu:
                inputs, static = inputs.cuda(), static.cuda()
            logits = model(inputs, static)
            ps.append(torch.sigmoid(logits).cpu().numpy())
            ys.append(labels.numpy())
    y = np.concatenate(ys)
    p = np.concatenate(ps)
    return roc_auc_score(y, p), average_precision_score(y, p)


def Train_Model(model, train_dataloader, valid_dataloader, num_epochs=300, patience=10, min_delta=0.00001,
                learning_rate=1e-3, pos_weight=None):
    print('Model Structure: ', model)
    print('Start Training ... ')

    use_gpu = torch.cuda.is_available()
    if use_gpu:
        model.cuda()

    if pos_weight is not None:
        pos_weight = torch.tensor([pos_weight])
        if use_gpu:
            pos_weight = pos_weight.cuda()
    loss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate)

    losses_train = []
    losses_valid = []
    best_auc = -np.inf
    best_state = None
    bad_epochs = 0

    cur_time = time.time()
    pre_time = time.time()

    for epoch in range(num_epochs):
        model.train()
        losses_epoch_train = []
        for data in train_dataloader:
            inputs, static, labels = data

            if use_gpu:
                inputs, static, labels = Variable(inputs.cuda()), Variable(static.cuda()), Variable(labels.cuda())
            else:
                inputs, static, labels = Variable(inputs), Variable(static), Variable(labels)

            model.zero_grad()
            outputs = model(inputs, static)
            loss_train = loss_fn(outputs, labels)
            losses_epoch_train.append(loss_train.item())

            optimizer.zero_grad()
            loss_train.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()

        # validation
        model.eval()
        losses_epoch_valid = []
        with torch.no_grad():
            for inputs_val, static_val, labels_val in valid_dataloader:
                if use_gpu:
                    inputs_val, static_val, labels_val = inputs_val.cuda(), static_val.cuda(), labels_val.cuda()
                outputs_val = model(inputs_val, static_val)
                losses_epoch_valid.append(loss_fn(outputs_val, labels_val).item())
        auc, ap = evaluate(model, valid_dataloader, use_gpu)

        avg_losses_epoch_train = float(np.mean(losses_epoch_train))
        avg_losses_epoch_valid = float(np.mean(losses_epoch_valid))
        losses_train.append(avg_losses_epoch_train)
        losses_valid.append(avg_losses_epoch_valid)

        if auc > best_auc + min_delta:
            best_auc = auc
            best_state = copy.deepcopy(model.state_dict())
            bad_epochs = 0
        else:
            bad_epochs += 1
            if bad_epochs >= patience:
                print('Early stopping at epoch {}'.format(epoch))
                break

        cur_time = time.time()
        print('Epoch: {}, train_loss: {}, valid_loss: {}, valid AUROC: {}, AUPRC: {}, time: {}, best model: {}'.format(
            epoch,
            np.around(avg_losses_epoch_train, decimals=8),
            np.around(avg_losses_epoch_valid, decimals=8),
            np.around(auc, decimals=4),
            np.around(ap, decimals=4),
            np.around([cur_time - pre_time], decimals=2),
            bad_epochs == 0))
        pre_time = cur_time

    if best_state is not None:
        model.load_state_dict(best_state)
    return model, [losses_train, losses_valid]


def main():
    args = parse_args()
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed(args.seed)

    npz = np.load(args.data)
    X, static, y, folds = npz['X'], npz['static'], npz['y'], npz['folds']
    idx_test = np.where(folds == args.fold)[0]
    rest = np.where(folds != args.fold)[0]
    rng = np.random.RandomState(args.seed)
    rng.shuffle(rest)
    n_val = len(rest) // 8
    idx_valid, idx_train = rest[:n_val], rest[n_val:]

    train_loader, valid_loader, test_loader, X_mean = PrepareDataset(
        X, static, y, idx_train, idx_valid, idx_test, BATCH_SIZE=args.batch_size)

    input_size = X.shape[2]
    model = GRUDClassifier(input_size, args.hidden, X_mean, n_static=static.shape[1], dropout=args.dropout)
    pos_weight = float((y[idx_train] == 0).sum()) / max(float((y[idx_train] == 1).sum()), 1.0)
    model, _ = Train_Model(model, train_loader, valid_loader, num_epochs=args.epochs,
                           patience=args.patience, learning_rate=args.lr, pos_weight=pos_weight)

    auc, ap = evaluate(model, test_loader, use_gpu=torch.cuda.is_available())
    print('TEST fold {}: AUROC {:.4f} AUPRC {:.4f}'.format(args.fold, auc, ap))

    os.makedirs(os.path.dirname(args.save), exist_ok=True)
    torch.save({'state_dict': model.state_dict(), 'args': vars(args), 'test_auc': auc}, args.save)


if __name__ == '__main__':
    main()
