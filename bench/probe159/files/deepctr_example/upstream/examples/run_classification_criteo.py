# -*- coding: utf-8 -*-
"""
Criteo CTR example for DeepCTR-Torch, extended to pick the model from the command line.

    python run_classification_criteo.py --model xdeepfm --epochs 10
    python run_classification_criteo.py --model wdl --gpus 0,1   # DataParallel over two cards
"""
import argparse

import pandas as pd
import torch
from sklearn.metrics import log_loss, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import LabelEncoder, MinMaxScaler

from deepctr_torch.inputs import SparseFeat, DenseFeat, get_feature_names
from deepctr_torch.models import DeepFM, WDL, xDeepFM, DCN

MODELS = {'deepfm': DeepFM, 'wdl': WDL, 'xdeepfm': xDeepFM, 'dcn': DCN}


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--data', default='./criteo_sample.txt')
    parser.add_argument('--model', default='xdeepfm', choices=sorted(MODELS))
    parser.add_argument('--epochs', type=int, default=10)
    parser.add_argument('--batch_size', type=int, default=256)
    parser.add_argument('--embedding_dim', type=int, default=4)
    parser.add_argument('--gpus', default='', help='comma separated gpu ids for DataParallel, e.g. "0,1"')
    parser.add_argument('--no_cuda', action='store_true')
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args()
    data = pd.read_csv(args.data)

    sparse_features = ['C' + str(i) for i in range(1, 27)]
    dense_features = ['I' + str(i) for i in range(1, 14)]

    data[sparse_features] = data[sparse_features].fillna('-1', )
    data[dense_features] = data[dense_features].fillna(0, )
    target = ['label']

    # 1.Label Encoding for sparse features,and do simple Transformation for dense features
    for feat in sparse_features:
        lbe = LabelEncoder()
        data[feat] = lbe.fit_transform(data[feat])
    mms = MinMaxScaler(feature_range=(0, 1))
    data[dense_features] = mms.fit_transform(data[dense_features])

    # 2.count #unique features for each sparse field,and record dense feature field name

    fixlen_feature_columns = [SparseFeat(feat, data[feat].nunique(), embedding_dim=args.embedding_dim)
                              for feat in sparse_features] + [DenseFeat(feat, 1, )
                                                              for feat in dense_features]

    dnn_feature_columns = fixlen_feature_columns
    linear_feature_columns = fixlen_feature_columns

    feature_names = get_feature_names(
        linear_feature_columns + dnn_feature_columns)

    # 3.generate input data for model

    train, test = train_test_split(data, test_size=0.2, random_state=2020)
    train_model_input = {name: train[name] for name in feature_names}
    test_model_input = {name: test[name] for name in feature_names}

    # 4.Define Model,train,predict and evaluate

    device = 'cpu'
    use_cuda = not args.no_cuda
    if use_cuda and torch.cuda.is_available():
        print('cuda ready...')
        device = 'cuda:0'
    gpus = [int(g) for g in args.gpus.split(',')] if args.gpus else None

    model = MODELS[args.model](linear_feature_columns=linear_feature_columns,
                               dnn_feature_columns=dnn_feature_columns,
                               task='binary',
                               l2_reg_embedding=1e-5, device=device, gpus=gpus)

    model.compile("adagrad", "binary_crossentropy",
                  metrics=["binary_crossentropy", "auc"], )

    history = model.fit(train_model_input, train[target].values, batch_size=args.batch_size, epochs=args.epochs,
                        verbose=2, validation_split=0.2)
    pred_ans = model.predict(test_model_input, 256)
    print("")
    print("test LogLoss", round(log_loss(test[target].values, pred_ans), 4))
    print("test AUC", round(roc_auc_score(test[target].values, pred_ans), 4))
    torch.save(model.state_dict(), '%s_criteo.pt' % args.model)
