# -*- coding: utf-8 -*-
import json
import logging
import os
import random
import time

import numpy as np
import pandas as pd
import torch
from sklearn.metrics import roc_auc_score

logger = logging.getLogger(__name__)


class Config(object):
    """Attribute-style access to the json experiment config."""

    def __init__(self, path=None, **kwargs):
        if path is not None:
            with open(path, "r") as f:
                self.__dict__.update(json.load(f))
        self.__dict__.update(kwargs)

    def update(self, **kwargs):
        self.__dict__.update(kwargs)

    def dump(self, path):
        with open(path, "w") as f:
            json.dump(self.__dict__, f, indent=2, sort_keys=True)

    def __repr__(self):
        return json.dumps(self.__dict__, indent=2, sort_keys=True)


def set_seed(seed, use_gpu=True):
    random.seed(seed)
    np.random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    torch.manual_seed(seed)
    if use_gpu:
        torch.cuda.manual_seed(seed)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def wrap_tensor(x, use_gpu, dtype=torch.float32):
    """numpy -> torch, moved to the GPU when requested."""
    t = torch.as_tensor(x, dtype=dtype)
    return t.cuda() if use_gpu else t


def load_data(path, feature_cols=None, treatment_col="treatment", label_col="label"):
    """Load a Lazada-style uplift csv (features + binary treatment + binary label)."""
    df = pd.read_csv(path)
    if feature_cols is None:
        feature_cols = [c for c in df.columns if c.startswith("f")]
    x = df[feature_cols].values.astype(np.float32)
    t = df[treatment_col].values.astype(np.float32)
    y = df[label_col].values.astype(np.float32)
    logger.info("loaded %s: n=%d, d=%d, treated=%.3f, positive=%.3f",
                path, x.shape[0], x.shape[1], t.mean(), y.mean())
    return x, t, y


def uplift_at_k(y_true, uplift, treatment, k=0.3):
    order = np.argsort(-uplift)
    n_top = int(len(order) * k)
    top = order[:n_top]
    y_top, t_top = y_true[top], treatment[top]
    if (t_top == 1).sum() == 0 or (t_top == 0).sum() == 0:
        return 0.0
    return y_top[t_top == 1].mean() - y_top[t_top == 0].mean()


def qini_curve(y_true, uplift, treatment):
    desc_score_indices = np.argsort(uplift, kind="mergesort")[::-1]
    y_true, uplift, treatment = y_true[desc_score_indices], uplift[desc_score_indices], treatment[desc_score_indices]

    y_true_ctrl, y_true_trmnt = y_true.copy(), y_true.copy()
    y_true_ctrl[treatment == 1] = 0
    y_true_trmnt[treatment == 0] = 0

    distinct_value_indices = np.where(np.diff(uplift))[0]
    threshold_indices = np.r_[distinct_value_indices, uplift.size - 1]

    num_trmnt = np.cumsum(treatment)[threshold_indices]
    y_trmnt = np.cumsum(y_true_trmnt)[threshold_indices]

    num_all = threshold_indices + 1

    num_ctrl = num_all - num_trmnt
    y_ctrl = np.cumsum(y_true_ctrl)[threshold_indices]

    curve_values = y_trmnt - y_ctrl * np.divide(num_trmnt, num_ctrl, out=np.zeros_like(num_trmnt, dtype=float),
                                                where=num_ctrl != 0)
    if num_all.size == 0 or curve_values[0] != 0 or num_all[0] != 0:
        num_all = np.r_[0, num_all]
        curve_values = np.r_[0, curve_values]
    return num_all, curve_values


def qini_auc_score(y_true, uplift, treatment):
    x_actual, y_actual = qini_curve(y_true, uplift, treatment)
    x_baseline, y_baseline = np.array([0, x_actual[-1]]), np.array([0, y_actual[-1]])
    auc_score_baseline = np.trapz(y_baseline, x_baseline)
    auc_score_actual = np.trapz(y_actual, x_actual)
    return (auc_score_actual - auc_score_baseline) / max(abs(auc_score_baseline), 1e-12)


def uplift_curve(y_true, uplift, treatment):
    desc_score_indices = np.argsort(uplift, kind="mergesort")[::-1]
    y_true, uplift, treatment = y_true[desc_score_indices], uplift[desc_score_indices], treatment[desc_score_indices]

    y_true_ctrl, y_true_trmnt = y_true.copy(), y_true.copy()
    y_true_ctrl[treatment == 1] = 0
    y_true_trmnt[treatment == 0] = 0

    distinct_value_indices = np.where(np.diff(uplift))[0]
    threshold_indices = np.r_[distinct_value_indices, uplift.size - 1]

    num_trmnt = np.cumsum(treatment)[threshold_indices]
    y_trmnt = np.cumsum(y_true_trmnt)[threshold_indices]

    num_all = threshold_indices + 1

    num_ctrl = num_all - num_trmnt
    y_ctrl = np.cumsum(y_true_ctrl)[threshold_indices]

    curve_values = (np.divide(y_trmnt, num_trmnt, out=np.zeros_like(y_trmnt, dtype=float), where=num_trmnt != 0) -
                    np.divide(y_ctrl, num_ctrl, out=np.zeros_like(y_ctrl, dtype=float), where=num_ctrl != 0)) * num_all
    if num_all.size == 0 or curve_values[0] != 0 or num_all[0] != 0:
        num_all = np.r_[0, num_all]
        curve_values = np.r_[0, curve_values]
    return num_all, curve_values


def uplift_auc_score(y_true, uplift, treatment):
    x_actual, y_actual = uplift_curve(y_true, uplift, treatment)
    x_baseline, y_baseline = np.array([0, x_actual[-1]]), np.array([0, y_actual[-1]])
    auc_score_baseline = np.trapz(y_baseline, x_baseline)
    auc_score_actual = np.trapz(y_actual, x_actual)
    return (auc_score_actual - auc_score_baseline) / max(abs(auc_score_baseline), 1e-12)


def evaluate_uplift(y_true, uplift, treatment, prpsy=None):
    res = {
        "qini": qini_auc_score(y_true, uplift, treatment),
        "auuc": uplift_auc_score(y_true, uplift, treatment),
        "uplift@10": uplift_at_k(y_true, uplift, treatment, k=0.1),
        "uplift@30": uplift_at_k(y_true, uplift, treatment, k=0.3),
    }
    if prpsy is not None and len(np.unique(treatment)) == 2:
        res["prpsy_auc"] = roc_auc_score(treatment, prpsy)
    return res


def pehe(tau_true, tau_pred):
    return float(np.sqrt(np.mean(np.square(tau_true - tau_pred))))


class Timer(object):
    def __init__(self, name="", use_gpu=False):
        self.name = name
        self.use_gpu = use_gpu

    def __enter__(self):
        if self.use_gpu:
            torch.cuda.synchronize()
        self.start = time.time()
        return self

    def __exit__(self, *args):
        if self.use_gpu:
            torch.cuda.synchronize()  # flush the stream so the wall clock is honest
        self.elapsed = time.time() - self.start
        logger.info("[%s] %.3fs", self.name, self.elapsed)
