#!/usr/bin/env python
"""Benchmark a few tsai architectures on a subset of the UCR archive.

Exported from the tsai tutorial notebook "01_Intro_to_Time_Series_Classification" and extended to loop
over datasets / architectures. Every run writes one row to results.csv.

Usage:
    python train_ucr_benchmark.py --dsids NATOPS LSST ECG200 --archs InceptionTimePlus ResNetPlus \
        --epochs 100 --bs 64 --fp16 --gpu 0
"""
import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from tsai.all import *

warnings.filterwarnings("ignore")

DEFAULT_DSIDS = ['ECG200', 'GunPoint', 'NATOPS', 'BasicMotions', 'Epilepsy', 'FaceDetection', 'LSST']
ARCH_KWARGS = {
    'InceptionTimePlus': dict(nf=32),
    'ResNetPlus': dict(),
    'XceptionTimePlus': dict(nf=16),
    'TSTPlus': dict(d_model=128, n_heads=8, dropout=0.1, fc_dropout=0.3),
    'MiniRocketPlus': dict(),
}


def parse_args():
    parser = argparse.ArgumentParser(description='tsai UCR/UEA benchmark')
    parser.add_argument('--dsids', nargs='+', default=DEFAULT_DSIDS)
    parser.add_argument('--archs', nargs='+', default=['InceptionTimePlus'])
    parser.add_argument('--epochs', type=int, default=100)
    parser.add_argument('--bs', type=int, default=64)
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--fp16', action='store_true', help='mixed precision training (learn.to_fp16)')
    parser.add_argument('--gpu', type=str, default='0', help='which GPU to expose to the process')
    parser.add_argument('--seed', type=int, default=42)
    parser.add_argument('--data_dir', type=str, default='./data/UCR')
    parser.add_argument('--out_dir', type=str, default='./results')
    parser.add_argument('--export', action='store_true', help='export the trained learner (.pkl)')
    return parser.parse_args()


def run_one(dsid, arch, args):
    X, y, splits = get_UCR_data(dsid, parent_dir=args.data_dir, split_data=False, verbose=False)
    tfms = [None, TSClassification()]
    batch_tfms = TSStandardize(by_sample=True)
    dls = get_ts_dls(X, y, splits=splits, tfms=tfms, batch_tfms=batch_tfms, bs=[args.bs, args.bs * 2])
    arch_kwargs = ARCH_KWARGS.get(arch, {})
    learn = ts_learner(dls, arch, arch_config=arch_kwargs, metrics=accuracy, seed=args.seed,
                       cbs=[ShowGraph()] if is_nb_env() else None)
    if args.fp16:
        learn = learn.to_fp16()

    start = time.time()
    learn.fit_one_cycle(args.epochs, lr_max=args.lr)
    train_time = time.time() - start

    valid_loss, valid_acc = learn.validate()
    probas, targets, preds = learn.get_X_preds(X[splits[1]], y[splits[1]])
    test_acc = (np.asarray(preds) == np.asarray(y[splits[1]])).mean()

    if args.export:
        export_dir = Path(args.out_dir) / 'models'
        export_dir.mkdir(parents=True, exist_ok=True)
        learn.export(export_dir / f'{dsid}_{arch}.pkl')

    n_params = count_parameters(learn.model)
    del learn, dls
    return dict(dsid=dsid, arch=arch, n_params=n_params, epochs=args.epochs, bs=args.bs, fp16=args.fp16,
                valid_loss=float(valid_loss), valid_acc=float(valid_acc), test_acc=float(test_acc),
                train_time=train_time)


def main():
    args = parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    my_setup()
    print(f'Training on: {default_device()}')

    rows = []
    for dsid in args.dsids:
        for arch in args.archs:
            print(f'\n>>> {dsid} | {arch}')
            try:
                row = run_one(dsid, arch, args)
            except Exception as e:  # keep the benchmark running if one dataset fails
                print(f'!!! {dsid} | {arch} failed: {e}')
                continue
            print(f"    acc: {row['test_acc']:.4f} | time: {row['train_time']:.1f}s | params: {row['n_params']:,}")
            rows.append(row)
            gc.collect()

    df = pd.DataFrame(rows)
    csv_path = out_dir / 'results.csv'
    if csv_path.exists():
        df = pd.concat([pd.read_csv(csv_path), df], ignore_index=True)
    df.to_csv(csv_path, index=False)
    print(df.groupby('arch')[['test_acc', 'train_time']].mean())


if __name__ == '__main__':
    main()
