import argparse
import math
import time

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.metrics import (accuracy_score, f1_score, precision_recall_fscore_support,
                             roc_auc_score)

from data_loader import AMINO_MAP_REV, AMINO_MAP_REV_


def str2bool(v):
    if isinstance(v, bool):
        return v
    if v.lower() in ('yes', 'true', 't', 'y', '1'):
        return True
    elif v.lower() in ('no', 'false', 'f', 'n', '0'):
        return False
    else:
        raise argparse.ArgumentTypeError('Boolean value expected.')


def asMinutes(s):
    m = math.floor(s / 60)
    s -= m * 60
    return '%dm %ds' % (m, s)


def timeSince(since):
    now = time.time()
    s = now - since
    return '%s' % (asMinutes(s))


def get_performance_batchiter(loader, model, device='cpu'):
    '''
    print classification performance for binary task

    Args:
     loader  - data loader
     model   - classification model
     loss_ft - loss function
    '''
    model.eval()

    loss = 0
    score, label = [], []
    with torch.no_grad():
        for batch in loader:
            x_pep = batch['pep'].to(device)
            x_tcr = batch['tcr'].to(device)
            y = batch['y'].to(device)

            yhat = model(x_pep, x_tcr)
            y = y.unsqueeze(-1).expand_as(yhat)
            loss += F.binary_cross_entropy(yhat, y, reduction='sum').item()
            score.extend(yhat.data.cpu().tolist())
            label.extend(y.data.cpu().tolist())

    perf = get_performance(score, label)
    perf['loss'] = round(loss, 4)

    return perf


def get_performance(score, label):
    '''
    get classification performance for binary task

    Args:
     score - 1D np.array or list
     label - 1D np.array or list
    '''
    score = np.array(score).reshape(-1)
    label = np.array(label).reshape(-1)
    pred = np.round(score)

    accuracy = accuracy_score(label, pred)
    precision, recall, f1, _ = precision_recall_fscore_support(label, pred, labels=[0, 1], zero_division=0)
    f1macro = f1_score(label, pred, average='macro', zero_division=0)
    f1micro = f1_score(label, pred, average='micro', zero_division=0)
    try:
        auc = roc_auc_score(label, score)
    except ValueError:
        auc = float('nan')

    return {
        'accuracy': round(accuracy, 4),
        'precision1': round(precision[1], 4),
        'precision0': round(precision[0], 4),
        'recall1': round(recall[1], 4),
        'recall0': round(recall[0], 4),
        'f1macro': round(f1macro, 4),
        'f1micro': round(f1micro, 4),
        'auc': round(auc, 4),
    }


def print_performance(perf):
    '''
    print classification performance for binary task

    Args:
     perf - dict of performance metrics
    '''
    print('loss={loss:.4f}\taccuracy={accuracy:.4f}\tauc={auc:.4f}'.format(**perf))
    print('precision1={precision1:.4f}\tprecision0={precision0:.4f}'.format(**perf))
    print('recall1={recall1:.4f}\trecall0={recall0:.4f}'.format(**perf))
    print('f1macro={f1macro:.4f}\tf1micro={f1micro:.4f}'.format(**perf))


def write_blackbox_output_batchiter(loader, model, wf, device='cpu', ifscore=True):
    '''
    write the predicted score (or binary label) for each (epitope, TCR) pair
    '''
    model.eval()

    wf.writerow(['epitope', 'tcr', 'label', 'prediction', 'score'])
    pep_idx = loader['pep_amino_idx']
    tcr_idx = loader['tcr_amino_idx']
    offset = 0
    with torch.no_grad():
        for batch in loader['loader']:
            x_pep = batch['pep'].to(device)
            x_tcr = batch['tcr'].to(device)
            y = batch['y']

            score = model(x_pep, x_tcr).data.cpu().reshape(-1).tolist()
            pred = [int(round(s)) for s in score]

            for i in range(len(score)):
                pep = ''.join(AMINO_MAP_REV_[a] for a in pep_idx[offset + i]).replace('@', '')
                tcr = ''.join(AMINO_MAP_REV_[a] for a in tcr_idx[offset + i]).replace('@', '')
                row = [pep, tcr, int(y[i].item()), pred[i]]
                if ifscore:
                    row.append(round(score[i], 4))
                wf.writerow(row)
            offset += len(score)
