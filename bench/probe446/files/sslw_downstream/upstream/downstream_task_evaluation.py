"""
Fine-tune / evaluate the self-supervised ResNet on the labelled downstream HAR datasets
(Capture-24, Rowlands, WISDM, REALWORLD, Opportunity, PAMAP2, ADL) with subject-wise 5-fold CV.

    python downstream_task_evaluation.py data=capture24_10s evaluation=all \
        evaluation.flip_net_path=/data/models/mtl_best.mdl
"""
import copy
import os
import time
import logging

import hydra
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.optim as optim
from omegaconf import OmegaConf
from sklearn import metrics
from sklearn.model_selection import GroupKFold
from sklearn.utils.class_weight import compute_class_weight
from torch.utils.data import DataLoader

from sslearning.data.data_loader import NormalDataset
from sslearning.models.accNet import Resnet, EvaClassifier
from sslearning.pytorchtools import EarlyStopping

log = logging.getLogger(__name__)
now = time.strftime('%Y-%m-%d_%H:%M:%S')


def train_val_split(X, Y, group, val_size=0.125):
    num_split = 1
    folds = GroupKFold(n_splits=int(1 / val_size))
    train_idx, val_idx = next(folds.split(X, Y, groups=group))
    return X[train_idx], X[val_idx], Y[train_idx], Y[val_idx], group[train_idx], group[val_idx]


def setup_model(cfg, my_device):
    model = Resnet(output_size=cfg.data.output_size, resnet_version=cfg.model.resnet_version,
                   epoch_len=cfg.dataloader.epoch_len, is_eva=True)

    if cfg.evaluation.load_weights:
        load_weights(cfg.evaluation.flip_net_path, model, my_device)
    if cfg.evaluation.freeze_weight:
        freeze_weights(model)

    if cfg.multi_gpu:
        model = nn.DataParallel(model, device_ids=cfg.gpu_ids)

    model.to(my_device, dtype=torch.float)
    return model


def load_weights(weight_path, model, my_device):
    # only need to change weights name when the model is trained in a distributed manner
    pretrained_dict = torch.load(weight_path, map_location=my_device)
    if 'state_dict' in pretrained_dict:
        pretrained_dict = pretrained_dict['state_dict']
    pretrained_dict_v2 = copy.deepcopy(pretrained_dict)
    for key in pretrained_dict:
        para_names = key.split('.')
        if para_names[0] == 'module':
            new_key = '.'.join(para_names[1:])
            pretrained_dict_v2[new_key] = pretrained_dict_v2.pop(key)

    model_dict = model.state_dict()
    # 1. filter out unnecessary keys such as the final linear layers
    #    we don't want linear layer weights either
    pretrained_dict = {k: v for k, v in pretrained_dict_v2.items() if k in model_dict and k.split('.')[0] != 'classifier'}
    # 2. overwrite entries in the existing state dict
    model_dict.update(pretrained_dict)
    # 3. load the new state dict
    model.load_state_dict(model_dict)
    log.info('{} weights loaded'.format(len(pretrained_dict)))


def freeze_weights(model):
    i = 0
    for name, param in model.named_parameters():
        if name.split('.')[0] != 'classifier':
            param.requires_grad = False
            i += 1
    log.info('Weights being frozen: {}'.format(i))


def train_mlp(model, train_loader, val_loader, cfg, my_device, weights):
    optimizer = optim.Adam(model.parameters(), lr=cfg.evaluation.learning_rate, amsgrad=True)
    if cfg.data.weighted_loss_fn:
        weights = torch.FloatTensor(weights).to(my_device)
        loss_fn = nn.CrossEntropyLoss(weight=weights)
    else:
        loss_fn = nn.CrossEntropyLoss()

    early_stopping = EarlyStopping(patience=cfg.evaluation.patience, path=cfg.model_path, verbose=True)
    for epoch in range(cfg.evaluation.num_epoch):
        model.train()
        train_losses, train_acces = [], []
        for i, (my_X, my_Y) in enumerate(train_loader):
            my_X, my_Y = my_X.to(my_device, dtype=torch.float), my_Y.to(my_device, dtype=torch.long)
            logits = model(my_X)
            loss = loss_fn(logits, my_Y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

            pred_y = torch.argmax(logits, dim=1)
            train_acc = torch.sum(pred_y == my_Y) / (pred_y.size()[0])
            train_losses.append(loss.cpu().detach())
            train_acces.append(train_acc.cpu().detach())

        val_loss, val_acc = _validate_model(model, val_loader, my_device, loss_fn)
        epoch_len = len(str(cfg.evaluation.num_epoch))
        print_msg = (f'[{epoch:>{epoch_len}}/{cfg.evaluation.num_epoch:>{epoch_len}}] | '
                     f'train_loss: {np.mean(train_losses):.3f} | valid_loss: {val_loss:.3f} | '
                     f'train_acc: {np.mean(train_acces):.3f} | valid_acc: {val_acc:.2f}')
        early_stopping(val_loss, model)
        log.info(print_msg)
        if early_stopping.early_stop:
            log.info('Early stopping')
            break
    return model


def _validate_model(model, val_loader, my_device, loss_fn):
    model.eval()
    losses, acces = [], []
    with torch.no_grad():
        for i, (my_X, my_Y) in enumerate(val_loader):
            my_X, my_Y = my_X.to(my_device, dtype=torch.float), my_Y.to(my_device, dtype=torch.long)
            logits = model(my_X)
            loss = loss_fn(logits, my_Y)
            pred_y = torch.argmax(logits, dim=1)
            acces.append((torch.sum(pred_y == my_Y) / pred_y.size()[0]).cpu().detach())
            losses.append(loss.cpu().detach())
    return np.mean(losses), np.mean(acces)


def mlp_predict(model, data_loader, my_device, cfg):
    predictions, true_labels, pids = [], [], []
    model.eval()
    with torch.no_grad():
        for i, (my_X, my_Y, my_PID) in enumerate(data_loader):
            my_X = my_X.to(my_device, dtype=torch.float)
            pred_y = torch.argmax(model(my_X), dim=1)
            predictions.append(pred_y.cpu())
            true_labels.append(my_Y)
            pids.append(my_PID)
    return torch.cat(true_labels).numpy(), torch.cat(predictions).numpy(), np.concatenate(pids)


def evaluate_mlp(X_feats, y, cfg, my_device, logger, groups=None):
    """Train an MLP / fine-tune the ResNet with subject-wise 5-fold CV."""
    results = []
    folds = GroupKFold(n_splits=5).split(X_feats, y, groups=groups)
    for fold, (train_idxs, test_idxs) in enumerate(folds):
        X_train, X_test = X_feats[train_idxs], X_feats[test_idxs]
        y_train, y_test = y[train_idxs], y[test_idxs]
        group_train, group_test = groups[train_idxs], groups[test_idxs]
        X_train, X_val, y_train, y_val, group_train, group_val = train_val_split(X_train, y_train, group_train)

        train_loader = DataLoader(NormalDataset(X_train, y_train, name='train', isLabel=True),
                                  batch_size=cfg.data.batch_size, shuffle=True, num_workers=2)
        val_loader = DataLoader(NormalDataset(X_val, y_val, name='val', isLabel=True),
                                batch_size=cfg.data.batch_size, shuffle=False, num_workers=0)
        test_loader = DataLoader(NormalDataset(X_test, y_test, pid=group_test, name='test', isLabel=True),
                                 batch_size=cfg.data.batch_size, shuffle=False, num_workers=0)

        weights = compute_class_weight('balanced', classes=np.unique(y_train), y=y_train) \
            if cfg.data.weighted_loss_fn else []

        model = setup_model(cfg, my_device)
        if cfg.is_verbose:
            log.info(model)
        train_mlp(model, train_loader, val_loader, cfg, my_device, weights)

        model = setup_model(cfg, my_device)
        model.load_state_dict(torch.load(cfg.model_path))
        y_test, y_test_pred, pid_test = mlp_predict(model, test_loader, my_device, cfg)

        results.append({'fold': fold,
                        'f1': metrics.f1_score(y_test, y_test_pred, average='macro'),
                        'kappa': metrics.cohen_kappa_score(y_test, y_test_pred),
                        'acc': metrics.accuracy_score(y_test, y_test_pred)})
        log.info('fold %d: %s', fold, results[-1])
    pd.DataFrame(results).to_csv(logger, index=False)
    return results


@hydra.main(config_path='conf', config_name='config_eva')
def main(cfg):
    log.info(OmegaConf.to_yaml(cfg))
    GPU = cfg.gpu
    if GPU != -1:
        my_device = 'cuda:' + str(GPU)
    elif cfg.multi_gpu is True:
        my_device = 'cuda:0'  # use the first GPU as master
    else:
        my_device = 'cpu'

    np.random.seed(42)
    torch.manual_seed(42)
    log.info('Device: {}'.format(my_device))

    X = np.load(cfg.data.X_path)
    Y = np.load(cfg.data.Y_path)
    P = np.load(cfg.data.PID_path)
    log.info('X shape: {}, Y shape: {}'.format(X.shape, Y.shape))

    le = {label: i for i, label in enumerate(np.unique(Y))}
    Y = np.array([le[label] for label in Y])

    cfg.model_path = os.path.join(cfg.evaluation.model_path_root, now + '.mdl')
    report_path = os.path.join(cfg.evaluation.report_root, now + '.csv')
    os.makedirs(cfg.evaluation.report_root, exist_ok=True)

    evaluate_mlp(X, Y, cfg, my_device, report_path, groups=P)


if __name__ == '__main__':
    main()
