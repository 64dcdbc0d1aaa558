"""Train InceptionTime on a UCR dataset (PyTorch re-implementation of hfawaz/InceptionTime).

    python main.py --archive_dir /data/UCRArchive_2018 --dataset Coffee --itr 5 --epochs 1500
"""
import argparse
import os
import time
import json
import random

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import TensorDataset, DataLoader
from sklearn.preprocessing import LabelEncoder
from sklearn.metrics import accuracy_score, precision_score, recall_score

from inception import InceptionTime

device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
torch.backends.cudnn.benchmark = True


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def read_ucr(archive_dir, dataset):
    "Reads <dataset>_TRAIN.tsv / <dataset>_TEST.tsv from the UCR 2018 archive (label in the first column)"
    root = os.path.join(archive_dir, dataset)
    train = pd.read_csv(os.path.join(root, f'{dataset}_TRAIN.tsv'), sep='\t', header=None)
    test = pd.read_csv(os.path.join(root, f'{dataset}_TEST.tsv'), sep='\t', header=None)
    y_train, x_train = train.values[:, 0], train.values[:, 1:]
    y_test, x_test = test.values[:, 0], test.values[:, 1:]
    # some datasets have varying lengths padded with NaN
    x_train = np.nan_to_num(x_train.astype(np.float32))
    x_test = np.nan_to_num(x_test.astype(np.float32))
    # z-normalise every series (as in the original Keras code)
    x_train = (x_train - x_train.mean(axis=1, keepdims=True)) / (x_train.std(axis=1, keepdims=True) + 1e-8)
    x_test = (x_test - x_test.mean(axis=1, keepdims=True)) / (x_test.std(axis=1, keepdims=True) + 1e-8)
    le = LabelEncoder().fit(np.concatenate([y_train, y_test]))
    return x_train[:, None, :], le.transform(y_train), x_test[:, None, :], le.transform(y_test), len(le.classes_)


def make_loaders(x_train, y_train, x_test, y_test, batch_size):
    bs = int(min(x_train.shape[0] / 10, batch_size))
    bs = max(bs, 1)
    train_ds = TensorDataset(torch.from_numpy(x_train), torch.from_numpy(y_train).long())
    test_ds = TensorDataset(torch.from_numpy(x_test), torch.from_numpy(y_test).long())
    train_dl = DataLoader(train_ds, batch_size=bs, shuffle=True, drop_last=False, num_workers=2,
                          pin_memory=torch.cuda.is_available())
    test_dl = DataLoader(test_ds, batch_size=bs * 4, shuffle=False, num_workers=2,
                         pin_memory=torch.cuda.is_available(), persistent_workers=False)
    return train_dl, test_dl


def evaluate(model, loader):
    model.eval()
    preds, trues, losses = [], [], []
    with torch.no_grad():
        for xb, yb in loader:
            xb, yb = xb.cuda(non_blocking=True), yb.cuda(non_blocking=True)
            out = model(xb)
            losses.append(F.cross_entropy(out, yb, reduction='sum').item())
            preds.append(out.argmax(-1).cpu())
            trues.append(yb.cpu())
    preds = torch.cat(preds).numpy()
    trues = torch.cat(trues).numpy()
    return sum(losses) / len(trues), preds, trues


def train_one(args, data, itr, out_dir):
    x_train, y_train, x_test, y_test, n_classes = data
    train_dl, test_dl = make_loaders(x_train, y_train, x_test, y_test, args.batch_size)

    model = InceptionTime(in_channels=1, n_classes=n_classes, n_filters=args.nb_filters, depth=args.depth)
    model = model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    # same as keras ReduceLROnPlateau(monitor='loss', factor=0.5, patience=50, min_lr=0.0001)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode='min', factor=0.5, patience=50,
                                                           min_lr=1e-4)

    best_loss, best_path = float('inf'), os.path.join(out_dir, f'best_model_itr{itr}.pt')
    start = time.time()
    for epoch in range(args.epochs):
        model.train()
        epoch_loss, n = 0.0, 0
        for xb, yb in train_dl:
            xb = xb.cuda(non_blocking=True)
            yb = yb.cuda(non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            out = model(xb)
            loss = F.cross_entropy(out, yb)
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item() * xb.size(0)
            n += xb.size(0)
        epoch_loss /= n
        scheduler.step(epoch_loss)
        if epoch_loss < best_loss:
            best_loss = epoch_loss
            torch.save(model.state_dict(), best_path)
        if epoch % 100 == 0 or epoch == args.epochs - 1:
            mem = torch.cuda.max_memory_allocated() / 2**20 if torch.cuda.is_available() else 0
            print(f'[itr {itr}] epoch {epoch:4d} | train loss {epoch_loss:.4f} | '
                  f'lr {optimizer.param_groups[0]["lr"]:.2e} | max mem {mem:.0f} MB')
    duration = time.time() - start

    # the original code keeps the model with the lowest *training* loss
    model.load_state_dict(torch.load(best_path, map_location=device))
    test_loss, preds, trues = evaluate(model, test_dl)
    res = dict(itr=itr, accuracy=accuracy_score(trues, preds),
               precision=precision_score(trues, preds, average='macro', zero_division=0),
               recall=recall_score(trues, preds, average='macro', zero_division=0),
               test_loss=test_loss, duration=duration)
    del model, optimizer
    torch.cuda.empty_cache()
    return res


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--archive_dir', type=str, default='/data/UCRArchive_2018')
    parser.add_argument('--dataset', type=str, default='Coffee')
    parser.add_argument('--itr', type=int, default=5, help='number of networks in the ensemble')
    parser.add_argument('--epochs', type=int, default=1500)
    parser.add_argument('--batch_size', type=int, default=64)
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--nb_filters', type=int, default=32)
    parser.add_argument('--depth', type=int, default=6)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--out_dir', type=str, default='./results')
    args = parser.parse_args()

    if not torch.cuda.is_available():
        print('WARNING: CUDA is not available, training InceptionTime on CPU will be very slow')
    else:
        print(f'Using {torch.cuda.get_device_name(0)}')

    out_dir = os.path.join(args.out_dir, 'InceptionTime', args.dataset)
    os.makedirs(out_dir, exist_ok=True)
    data = read_ucr(args.archive_dir, args.dataset)
    results = []
    for itr in range(args.itr):
        set_seed(args.seed + itr)
        res = train_one(args, data, itr, out_dir)
        print(json.dumps(res))
        results.append(res)
    df = pd.DataFrame(results)
    df.to_csv(os.path.join(out_dir, 'df_metrics.csv'), index=False)
    print(df[['accuracy', 'duration']].describe())


if __name__ == '__main__':
    main()
