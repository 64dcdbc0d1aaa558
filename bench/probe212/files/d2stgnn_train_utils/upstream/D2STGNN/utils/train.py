import os
import time
import pickle
import functools

import numpy as np
import torch
import torch.nn as nn


def data_reshaper(data, device):
    """numpy batch (B, L, N, C) -> float tensor on `device`."""
    data = torch.Tensor(data).to(device, non_blocking=True)
    return data


def save_model(model, save_path):
    parent_dir = os.path.dirname(save_path)
    if parent_dir and not os.path.exists(parent_dir):
        os.makedirs(parent_dir)
    # unwrap nn.DataParallel so that the checkpoint can be loaded on a single GPU
    if isinstance(model, nn.DataParallel):
        model = model.module
    torch.save(model.state_dict(), save_path)


def load_model(model, save_path, device=None):
    """Load weights into `model` (handles DataParallel prefixes)."""
    if device is None:
        device = next(model.parameters()).device
    state_dict = torch.load(save_path, map_location=device)
    target = model.module if isinstance(model, nn.DataParallel) else model
    if list(state_dict.keys())[0].startswith('module.'):
        state_dict = {k[len('module.'):]: v for k, v in state_dict.items()}
    target.load_state_dict(state_dict)
    return model


def clock(func):
    @functools.wraps(func)
    def clocked(*args, **kw):
        """decorator for timing"""
        t0 = time.perf_counter()
        result = func(*args, **kw)
        elapsed = time.perf_counter() - t0
        name = func.__name__
        print('%s: %0.8fs...' % (name, elapsed))
        return result
    return clocked


def cuda_timer(func):
    """Like `clock`, but waits for queued GPU kernels so the number is the real step time."""
    @functools.wraps(func)
    def timed(*args, **kw):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        result = func(*args, **kw)
        torch.cuda.synchronize()  # wait for the step's kernels
        print('%s: %0.4fs (GPU synced)' % (func.__name__, time.perf_counter() - t0))
        return result
    return timed


def re_max_min_normalization(x, _max, _min):
    x = (x + 1.) / 2.
    x = 1. * x * (_max - _min) + _min
    return x


def max_min_normalization(x, _max, _min):
    x = 1. * (x - _min) / (_max - _min)
    x = x * 2. - 1.
    return x


def re_standard_transform(data, **kwargs):
    mean, std = kwargs['mean'], kwargs['std']
    data = data * std
    data = data + mean
    return data


def standard_transform(data, **kwargs):
    mean, std = kwargs['mean'], kwargs['std']
    data = data - mean
    data = data / std
    return data


def free_gpu_cache(verbose=False):
    """Release cached blocks between validation and test (METR-LA test set is large)."""
    if verbose:
        print('GPU memory allocated before empty_cache: {:.1f} MB'.format(torch.cuda.memory_allocated() / 2 ** 20))
    torch.cuda.empty_cache()


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def load_pkl(pickle_file):
    try:
        with open(pickle_file, 'rb') as f:
            pickle_data = pickle.load(f)
    except UnicodeDecodeError:
        with open(pickle_file, 'rb') as f:
            pickle_data = pickle.load(f, encoding='latin1')
    except Exception as e:
        print('Unable to load data ', pickle_file, ':', e)
        raise
    return pickle_data


def dump_pkl(obj, file_path):
    with open(file_path, 'wb') as f:
        pickle.dump(obj, f)


def describe_device(device):
    """Human readable description used in the training log header."""
    device = torch.device(device)
    if device.type == 'cuda':
        props = torch.cuda.get_device_properties(device)
        return '{} ({:.0f} GB, sm_{}{})'.format(props.name, props.total_memory / 2 ** 30, props.major, props.minor)
    return str(device)


# ============================== metrics (numpy / torch) ============================== #

def masked_mse(preds, labels, null_val=np.nan):
    if np.isnan(null_val):
        mask = ~torch.isnan(labels)
    else:
        mask = (labels != null_val)
    mask = mask.float()
    mask /= torch.mean((mask))
    mask = torch.where(torch.isnan(mask), torch.zeros_like(mask), mask)
    loss = (preds - labels) ** 2
    loss = loss * mask
    loss = torch.where(torch.isnan(loss), torch.zeros_like(loss), loss)
    return torch.mean(loss)


def masked_rmse(preds, labels, null_val=np.nan):
    return torch.sqrt(masked_mse(preds=preds, labels=labels, null_val=null_val))


def masked_mae(preds, labels, null_val=np.nan):
    if np.isnan(null_val):
        mask = ~torch.isnan(labels)
    else:
        mask = (labels != null_val)
    mask = mask.float()
    mask /= torch.mean((mask))
    mask = torch.where(torch.isnan(mask), torch.zeros_like(mask), mask)
    loss = torch.abs(preds - labels)
    loss = loss * mask
    loss = torch.where(torch.isnan(loss), torch.zeros_like(loss), loss)
    return torch.mean(loss)


def masked_mape(preds, labels, null_val=np.nan):
    if np.isnan(null_val):
        mask = ~torch.isnan(labels)
    else:
        mask = (labels != null_val)
    mask = mask.float()
    mask /= torch.mean((mask))
    mask = torch.where(torch.isnan(mask), torch.zeros_like(mask), mask)
    loss = torch.abs(preds - labels) / labels
    loss = loss * mask
    loss = torch.where(torch.isnan(loss), torch.zeros_like(loss), loss)
    return torch.mean(loss)


def metric(pred, real):
    mae = masked_mae(pred, real, 0.0).item()
    mape = masked_mape(pred, real, 0.0).item()
    rmse = masked_rmse(pred, real, 0.0).item()
    return mae, mape, rmse


def horizon_report(preds, reals, horizons=(3, 6, 12)):
    """preds / reals: (B, L, N) tensors on any device; returns a printable table."""
    lines = []
    for h in horizons:
        mae, mape, rmse = metric(preds[:, h - 1, :], reals[:, h - 1, :])
        lines.append('Horizon {:02d} | MAE {:.4f} | RMSE {:.4f} | MAPE {:.4f}'.format(h, mae, rmse, mape))
    return '\n'.join(lines)
