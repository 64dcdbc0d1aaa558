"""Metrics for accuracy and fairness across Fitzpatrick skin types.

Fairness metrics follow the FairDisCo paper:
  PQD  - predictive quality disparity (min/max accuracy ratio over skin types)
  DPM  - demographic disparity metric (mean over classes of min/max positive-rate ratio)
  EOM  - equality of opportunity metric (mean over classes of min/max TPR ratio)
"""
import os
import random

import numpy as np
import pandas as pd
import torch
from sklearn.metrics import accuracy_score, precision_score, recall_score, f1_score, balanced_accuracy_score


def seed_everything(seed=64):
    random.seed(seed)
    os.environ['PYTHONHASHSEED'] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def _safe_ratio(values):
    values = [v for v in values if not np.isnan(v)]
    if len(values) == 0 or max(values) == 0:
        return np.nan
    return min(values) / max(values)


def cal_metrics(df, level):
    """df has columns label, prediction, fitzpatrick (1..6). Returns a dict."""
    y_true = df['label'].values
    y_pred = df['prediction'].values
    fitz = df['fitzpatrick'].values
    types = sorted([t for t in np.unique(fitz) if t > 0])

    out = {
        'acc_avg': accuracy_score(y_true, y_pred),
        'balanced_acc': balanced_accuracy_score(y_true, y_pred),
        'precision_avg': precision_score(y_true, y_pred, average='macro', zero_division=0),
        'recall_avg': recall_score(y_true, y_pred, average='macro', zero_division=0),
        'F1_avg': f1_score(y_true, y_pred, average='macro', zero_division=0),
    }

    accs = []
    for t in types:
        m = fitz == t
        acc = accuracy_score(y_true[m], y_pred[m]) if m.sum() > 0 else np.nan
        out['acc_type{}'.format(t)] = acc
        accs.append(acc)
    out['PQD'] = _safe_ratio(accs)

    dpm, eom = [], []
    for c in range(level):
        pos_rate, tpr = [], []
        for t in types:
            m = fitz == t
            if m.sum() == 0:
                continue
            pos_rate.append(np.mean(y_pred[m] == c))
            mc = m & (y_true == c)
            tpr.append(np.mean(y_pred[mc] == c) if mc.sum() > 0 else np.nan)
        dpm.append(_safe_ratio(pos_rate))
        eom.append(_safe_ratio(tpr))
    out['DPM'] = np.nanmean(dpm)
    out['EOM'] = np.nanmean(eom)
    return out


def summarize_runs(result_dir, pattern='results_FairDisCo_'):
    rows = []
    for f in sorted(os.listdir(result_dir)):
        if f.startswith(pattern) and f.endswith('.csv'):
            df = pd.read_csv(os.path.join(result_dir, f))
            level = int(df['label'].max()) + 1
            r = cal_metrics(df, level)
            r['file'] = f
            rows.append(r)
    return pd.DataFrame(rows)
