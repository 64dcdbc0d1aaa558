# -*- coding:utf-8 -*-
"""
DIN / DIEN on a synthetic user-behaviour dataset (Amazon-Electronics-like schema),
optionally trained on several GPUs with DeepCTR-Torch's built-in DataParallel.

    python run_din_multigpu.py --model din --gpus 0,1
"""
import argparse

import numpy as np
import torch

from deepctr_torch.callbacks import EarlyStopping, ModelCheckpoint
from deepctr_torch.inputs import (DenseFeat, SparseFeat, VarLenSparseFeat,
                                  get_feature_names)
from deepctr_torch.models import DIEN, DIN


def get_xy_fd(use_neg=False, hash_flag=False, n_samples=4096, seq_len=50, seed=2020):
    rng = np.random.RandomState(seed)
    feature_columns = [SparseFeat('user', 30000, embedding_dim=16),
                       SparseFeat('gender', 2, embedding_dim=4),
                       SparseFeat('item_id', 60000 + 1, embedding_dim=16),
                       SparseFeat('cate_id', 800 + 1, embedding_dim=16),
                       DenseFeat('pay_score', 1)]

    feature_columns += [
        VarLenSparseFeat(SparseFeat('hist_item_id', vocabulary_size=60000 + 1, embedding_dim=16,
                                    embedding_name='item_id'), maxlen=seq_len, length_name="seq_length"),
        VarLenSparseFeat(SparseFeat('hist_cate_id', 800 + 1, embedding_dim=16, embedding_name='cate_id'),
                         maxlen=seq_len, length_name="seq_length")]

    behavior_feature_list = ["item_id", "cate_id"]
    uid = rng.randint(0, 30000, n_samples)
    ugender = rng.randint(0, 2, n_samples)
    iid = rng.randint(1, 60001, n_samples)
    cate_id = rng.randint(1, 801, n_samples)
    score = rng.rand(n_samples)

    behavior_length = rng.randint(1, seq_len + 1, n_samples)
    hist_iid = np.zeros((n_samples, seq_len), dtype=np.int64)
    hist_cate_id = np.zeros((n_samples, seq_len), dtype=np.int64)
    for i, n in enumerate(behavior_length):
        hist_iid[i, :n] = rng.randint(1, 60001, n)
        hist_cate_id[i, :n] = rng.randint(1, 801, n)

    feature_dict = {'user': uid, 'gender': ugender, 'item_id': iid, 'cate_id': cate_id,
                    'hist_item_id': hist_iid, 'hist_cate_id': hist_cate_id,
                    'pay_score': score, "seq_length": behavior_length}

    if use_neg:
        feature_dict['neg_hist_item_id'] = rng.randint(1, 60001, (n_samples, seq_len))
        feature_dict['neg_hist_cate_id'] = rng.randint(1, 801, (n_samples, seq_len))
        feature_columns += [
            VarLenSparseFeat(SparseFeat('neg_hist_item_id', vocabulary_size=60000 + 1, embedding_dim=16,
                                        embedding_name='item_id'), maxlen=seq_len, length_name="seq_length"),
            VarLenSparseFeat(SparseFeat('neg_hist_cate_id', 800 + 1, embedding_dim=16, embedding_name='cate_id'),
                             maxlen=seq_len, length_name="seq_length")]

    x = {name: feature_dict[name] for name in get_feature_names(feature_columns)}
    y = (rng.rand(n_samples) < 0.3).astype(np.float32)
    return x, y, feature_columns, behavior_feature_list


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=["din", "dien"], default="din")
    parser.add_argument("--gpus", type=str, default="0", help="comma separated GPU ids, e.g. 0,1")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch_size", type=int, default=256, help="per-GPU batch size")
    args = parser.parse_args()

    x, y, feature_columns, behavior_feature_list = get_xy_fd(use_neg=args.model == "dien")

    device = 'cpu'
    use_cuda = True
    gpus = None
    if use_cuda and torch.cuda.is_available():
        print('cuda ready...')
        gpus = [int(g) for g in args.gpus.split(",")]
        device = 'cuda:{}'.format(gpus[0])
        if len(gpus) == 1:
            gpus = None  # single GPU: no DataParallel wrapper

    if args.model == "din":
        model = DIN(feature_columns, behavior_feature_list, device=device, att_weight_normalization=True,
                    gpus=gpus)
    else:
        model = DIEN(feature_columns, behavior_feature_list, dnn_hidden_units=[4, 4, 4], dnn_dropout=0.6,
                     gru_type="AUGRU", use_negsampling=True, device=device, gpus=gpus)

    model.compile('adagrad', 'binary_crossentropy',
                  metrics=['binary_crossentropy', 'auc'])
    es = EarlyStopping(monitor='val_binary_crossentropy', min_delta=0, verbose=1, patience=2, mode='min')
    mdckpt = ModelCheckpoint(filepath='model.ckpt', monitor='val_auc', verbose=1, save_best_only=True,
                             mode='max')
    history = model.fit(x, y, batch_size=args.batch_size, epochs=args.epochs, verbose=2,
                        validation_split=0.2, callbacks=[es, mdckpt])
    print("best val auc:", max(history.history.get("val_auc", [0.0])))
    if device.startswith("cuda"):
        print("peak GPU memory: %.1f MiB" % (torch.cuda.max_memory_allocated() / 2 ** 20))
