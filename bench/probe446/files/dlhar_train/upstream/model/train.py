##################################################
# All functions related to training a deep learning architecture using sensor-based activity data.
##################################################
# Author: Marius Bock
##################################################

import os
import random
import time

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.metrics import precision_score, recall_score, f1_score, jaccard_score, confusion_matrix
from sklearn.utils import class_weight
from torch.utils.data import DataLoader

from data_processing.sliding_window import apply_sliding_window
from misc.osutils import mkdir_if_missing
from misc.torchutils import init_weights, seed_worker, plot_grad_flow
from model.DeepConvLSTM import DeepConvLSTM
from model.evaluate import evaluate_participant_scores


class LabelSmoothingLoss(nn.Module):
    def __init__(self, classes, smoothing=0.0, dim=-1):
        super(LabelSmoothingLoss, self).__init__()
        self.confidence = 1.0 - smoothing
        self.smoothing = smoothing
        self.cls = classes
        self.dim = dim

    def forward(self, pred, target):
        pred = pred.log_softmax(dim=self.dim)
        with torch.no_grad():
            true_dist = torch.zeros_like(pred)
            true_dist.fill_(self.smoothing / (self.cls - 1))
            true_dist.scatter_(1, target.data.unsqueeze(1), self.confidence)
        return torch.mean(torch.sum(-true_dist * pred, dim=self.dim))


class EarlyStopping:
    def __init__(self, patience=5, verbose=False):
        self.patience = patience
        self.verbose = verbose
        self.counter = 0
        self.best_score = None
        self.early_stop = False

    def __call__(self, val_loss):
        score = -val_loss
        if self.best_score is None:
            self.best_score = score
        elif score < self.best_score:
            self.counter += 1
            if self.verbose:
                print(f'EarlyStopping counter: {self.counter} out of {self.patience}')
            if self.counter >= self.patience:
                self.early_stop = True
        else:
            self.best_score = score
            self.counter = 0


def init_optimizer(network, config):
    if config['optimizer'] == 'adadelta':
        opt = torch.optim.Adadelta(network.parameters(), lr=config['lr'], weight_decay=config['weight_decay'])
    elif config['optimizer'] == 'adam':
        opt = torch.optim.Adam(network.parameters(), lr=config['lr'], weight_decay=config['weight_decay'])
    elif config['optimizer'] == 'rmsprop':
        opt = torch.optim.RMSprop(network.parameters(), lr=config['lr'], weight_decay=config['weight_decay'])
    else:
        raise ValueError('unknown optimizer {}'.format(config['optimizer']))
    return opt


def init_loss(config, class_weights=None):
    if config['loss'] == 'cross-entropy':
        if class_weights is not None:
            criterion = nn.CrossEntropyLoss(weight=class_weights)
        else:
            criterion = nn.CrossEntropyLoss()
    elif config['loss'] == 'label-smoothing':
        criterion = LabelSmoothingLoss(smoothing=config['smoothing'], classes=config['nb_classes'])
    else:
        raise ValueError('unknown loss {}'.format(config['loss']))
    return criterion


def init_scheduler(optimizer, config):
    return torch.optim.lr_scheduler.StepLR(optimizer, config['lr_step'], config['lr_decay'])


def train(train_features, train_labels, val_features, val_labels, network, optimizer, loss, config, log_date,
          log_timestamp, lr_scheduler=None):
    """
    Method to train a PyTorch network.
    """
    config['window_size'] = train_features.shape[1]
    config['nb_channels'] = train_features.shape[2]

    network.to(config['gpu'])
    network.train()

    # initialize optional weights
    if config['weights_init'] is not None:
        network = init_weights(network, config['weights_init'])

    dataset = torch.utils.data.TensorDataset(torch.from_numpy(train_features), torch.from_numpy(train_labels))
    valid_dataset = torch.utils.data.TensorDataset(torch.from_numpy(val_features), torch.from_numpy(val_labels))

    # fixed generator so that shuffling is reproducible across runs
    g = torch.Generator()
    g.manual_seed(config['seed'])

    trainloader = DataLoader(dataset, batch_size=config['batch_size'], shuffle=config['shuffling'],
                             worker_init_fn=seed_worker, generator=g, num_workers=2, pin_memory=True)
    valloader = DataLoader(valid_dataset, batch_size=config['batch_size'], shuffle=False,
                           worker_init_fn=seed_worker, generator=g)

    if config['early_stopping']:
        es = EarlyStopping(patience=config['es_patience'], verbose=False)

    best_f1 = -1.0
    best_val_preds = None
    best_train_preds = None
    best_epoch = 0

    for e in range(config['nb_epochs']):
        start_time = time.time()
        train_losses = []
        train_preds = []
        train_gt = []
        network.train()
        for i, (x, y) in enumerate(trainloader):
            inputs, targets = x.to(config['gpu']), y.to(config['gpu'])
            optimizer.zero_grad()

            # forward
            train_output = network(inputs.float())
            loss_value = loss(train_output, targets.long())
            loss_value.backward()
            if config['plot_gradient']:
                plot_grad_flow(network)
            optimizer.step()

            train_output = torch.nn.functional.softmax(train_output, dim=1)
            train_losses.append(loss_value.item())

            y_preds = np.argmax(train_output.cpu().detach().numpy(), axis=-1)
            y_true = targets.cpu().numpy().flatten()
            train_preds = np.concatenate((np.array(train_preds, int), np.array(y_preds, int)))
            train_gt = np.concatenate((np.array(train_gt, int), np.array(y_true, int)))

            if i % config['print_freq'] == 0 and i != 0:
                print('| epoch {:3d} | {:5d} batches | loss {:5.4f} | {:5.2f} s/batch'
                      .format(e, i, np.mean(train_losses), (time.time() - start_time) / (i + 1)))

        # validation
        val_preds, val_gt, val_losses = [], [], []
        network.eval()
        with torch.no_grad():
            for i, (x, y) in enumerate(valloader):
                inputs, targets = x.to(config['gpu']), y.to(config['gpu'])
                val_output = network(inputs.float())
                val_loss = loss(val_output, targets.long())
                val_output = torch.nn.functional.softmax(val_output, dim=1)
                val_losses.append(val_loss.item())
                y_preds = np.argmax(val_output.cpu().numpy(), axis=-1)
                y_true = targets.cpu().numpy().flatten()
                val_preds = np.concatenate((np.array(val_preds, int), np.array(y_preds, int)))
                val_gt = np.concatenate((np.array(val_gt, int), np.array(y_true, int)))

        val_f1 = f1_score(val_gt, val_preds, average='macro')
        print('EPOCH: {}/{}'.format(e + 1, config['nb_epochs']),
              '\nTrain Loss: {:.4f}'.format(np.mean(train_losses)),
              'Train Acc: {:.4f}'.format(jaccard_score(train_gt, train_preds, average='macro')),
              'Train F1: {:.4f}'.format(f1_score(train_gt, train_preds, average='macro')),
              '\nValid Loss: {:.4f}'.format(np.mean(val_losses)),
              'Valid F1: {:.4f}'.format(val_f1),
              'Valid Prec: {:.4f}'.format(precision_score(val_gt, val_preds, average='macro')),
              'Valid Rcll: {:.4f}'.format(recall_score(val_gt, val_preds, average='macro')))

        if val_f1 > best_f1:
            best_f1 = val_f1
            best_val_preds = val_preds
            best_train_preds = train_preds
            best_epoch = e
            if config['save_model']:
                mkdir_if_missing(os.path.join('logs', log_date, log_timestamp))
                torch.save({'model_state_dict': network.state_dict(),
                            'optim_state_dict': optimizer.state_dict(),
                            'epoch': e},
                           os.path.join('logs', log_date, log_timestamp, 'checkpoint_best.pth'))

        if config['early_stopping']:
            es(np.mean(val_losses))
            if es.early_stop:
                print('Stopping training early because validation loss did not improve!')
                break

        if lr_scheduler is not None and config['adj_lr']:
            lr_scheduler.step()

    print('Best epoch: {} (F1 {:.4f})'.format(best_epoch, best_f1))
    if config['valid_epoch'] == 'last':
        return network, val_preds, val_gt, train_preds, train_gt
    return network, best_val_preds, val_gt, best_train_preds, train_gt


def cross_participant_cv(data, labels, config, log_date, log_timestamp):
    """
    Leave-one-subject-out cross-validation. Column 0 of `data` holds the subject identifier.
    """
    subjects = np.unique(data[:, 0])
    all_eval_output = None
    orig_lr = config['lr']
    participant_scores = np.zeros((4, config['nb_classes'], len(subjects)))
    gen_gap_scores = np.zeros((4, len(subjects)))
    cm_all = np.zeros((config['nb_classes'], config['nb_classes']))

    for i, sbj in enumerate(subjects):
        print('\n VALIDATING FOR SUBJECT {0} OF {1}'.format(int(sbj) + 1, len(subjects)))
        config['lr'] = orig_lr
        train_data = data[data[:, 0] != sbj]
        val_data = data[data[:, 0] == sbj]

        # sliding window over train / validation data
        X_train, y_train = apply_sliding_window(train_data[:, :-1], train_data[:, -1],
                                                sliding_window_size=config['sw_length'],
                                                unit=config['sw_unit'],
                                                sampling_rate=config['sampling_rate'],
                                                sliding_window_overlap=config['sw_overlap'])
        X_val, y_val = apply_sliding_window(val_data[:, :-1], val_data[:, -1],
                                            sliding_window_size=config['sw_length'],
                                            unit=config['sw_unit'],
                                            sampling_rate=config['sampling_rate'],
                                            sliding_window_overlap=config['sw_overlap'])
        # drop subject column
        X_train, X_val = X_train[:, :, 1:], X_val[:, :, 1:]
        config['window_size'] = X_train.shape[1]
        config['nb_channels'] = X_train.shape[2]

        net = DeepConvLSTM(config['nb_channels'], config['nb_classes'], config['window_size'], config)

        if config['use_weights']:
            class_weights = torch.tensor(class_weight.compute_class_weight('balanced',
                                                                           classes=np.unique(y_train + 1),
                                                                           y=y_train + 1),
                                         dtype=torch.float).to(config['gpu'])
        else:
            class_weights = None
        loss = init_loss(config, class_weights)
        opt = init_optimizer(net, config)
        scheduler = init_scheduler(opt, config)

        net, val_output, val_gt, train_output, train_gt = train(X_train, y_train, X_val, y_val, network=net,
                                                                optimizer=opt, loss=loss, lr_scheduler=scheduler,
                                                                config=config, log_date=log_date,
                                                                log_timestamp=log_timestamp)

        cls = np.array(range(config['nb_classes']))
        participant_scores[0, :, int(sbj)] = jaccard_score(val_gt, val_output, average=None, labels=cls)
        participant_scores[1, :, int(sbj)] = precision_score(val_gt, val_output, average=None, labels=cls)
        participant_scores[2, :, int(sbj)] = recall_score(val_gt, val_output, average=None, labels=cls)
        participant_scores[3, :, int(sbj)] = f1_score(val_gt, val_output, average=None, labels=cls)
        gen_gap_scores[3, int(sbj)] = f1_score(train_gt, train_output, average='macro') - \
            f1_score(val_gt, val_output, average='macro')
        cm_all += confusion_matrix(val_gt, val_output, labels=cls)

        # free the memory held by this fold's network before the next subject
        del net, opt, loss
        if 'cuda' in config['gpu']:
            torch.cuda.empty_cache()

    if config['save_analysis']:
        log_dir = os.path.join('logs', log_date, log_timestamp)
        mkdir_if_missing(log_dir)
        np.save(os.path.join(log_dir, 'participant_scores.npy'), participant_scores)
        np.save(os.path.join(log_dir, 'gen_gap_scores.npy'), gen_gap_scores)
        np.save(os.path.join(log_dir, 'confusion_matrix.npy'), cm_all)

    return None


def per_participant_cv(data, labels, config, log_date, log_timestamp):
    raise NotImplementedError('per-participant validation is handled in the notebooks')


def train_valid_split(train_data, valid_data, config, log_date, log_timestamp):
    raise NotImplementedError('use cross_participant_cv for the paper experiments')
