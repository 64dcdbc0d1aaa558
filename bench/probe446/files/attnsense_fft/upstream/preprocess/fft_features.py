"""
Loading and windowing of the raw recordings used for AttnSense.

All heavy lifting is done with numpy once and cached as .npz, the model itself computes the
short-time spectra on the accelerator (see attnsense/model.py::AttnSense.spectrogram).
"""
import os

import numpy as np
import pandas as pd


PAMAP2_COLUMNS = (['timestamp', 'activity_id', 'heart_rate'] +
                  ['hand_%d' % i for i in range(17)] +
                  ['chest_%d' % i for i in range(17)] +
                  ['ankle_%d' % i for i in range(17)])
# acc16 (3), gyro (3), mag (3) of every IMU
PAMAP2_KEEP = [1, 2, 3, 7, 8, 9, 10, 11, 12]
PAMAP2_ACTIVITIES = [1, 2, 3, 4, 5, 6, 7, 12, 13, 16, 17, 24]
PAMAP2_TRAIN = [1, 2, 3, 4, 7, 8, 9]
PAMAP2_VAL = [5]
PAMAP2_TEST = [6]


def sliding_windows(x, y, win_len, step):
    """Majority-label windows of length win_len with stride step."""
    n = (len(x) - win_len) // step + 1
    if n <= 0:
        return np.empty((0, win_len, x.shape[1]), np.float32), np.empty((0,), np.int64)
    idx = np.arange(win_len)[None, :] + step * np.arange(n)[:, None]
    xw = x[idx]
    yw = np.array([np.bincount(y[i]).argmax() for i in idx])
    return xw.astype(np.float32), yw.astype(np.int64)


def _read_pamap2_subject(path):
    df = pd.read_csv(path, sep=' ', header=None, names=PAMAP2_COLUMNS)
    df = df[df['activity_id'].isin(PAMAP2_ACTIVITIES)]
    cols = []
    for imu in ('hand', 'chest', 'ankle'):
        cols += ['%s_%d' % (imu, i) for i in PAMAP2_KEEP]
    df[cols] = df[cols].interpolate(limit_direction='both')
    # downsample 100 Hz -> 33.3 Hz as in the paper
    df = df.iloc[::3]
    labels = df['activity_id'].map({a: i for i, a in enumerate(PAMAP2_ACTIVITIES)}).values
    return df[cols].values.astype(np.float32), labels.astype(np.int64)


def _load_pamap2(data_dir, win_len):
    splits = {}
    for name, subjects in (('train', PAMAP2_TRAIN), ('val', PAMAP2_VAL), ('test', PAMAP2_TEST)):
        xs, ys = [], []
        for s in subjects:
            x, y = _read_pamap2_subject(os.path.join(data_dir, 'PAMAP2_Dataset', 'Protocol', 'subject10%d.dat' % s))
            xw, yw = sliding_windows(x, y, win_len, win_len // 2)
            xs.append(xw)
            ys.append(yw)
        splits[name] = (np.concatenate(xs), np.concatenate(ys))
    # z-normalise with train statistics
    mean = splits['train'][0].reshape(-1, splits['train'][0].shape[-1]).mean(0)
    std = splits['train'][0].reshape(-1, splits['train'][0].shape[-1]).std(0) + 1e-6
    for k in splits:
        splits[k] = ((splits[k][0] - mean) / std, splits[k][1])
    return splits['train'], splits['val'], splits['test'], len(PAMAP2_ACTIVITIES)


def load_windows(dataset, data_dir, win_len):
    cache = os.path.join(data_dir, 'cache_{}_{}.npz'.format(dataset, win_len))
    if os.path.exists(cache):
        d = np.load(cache)
        return ((d['x_tr'], d['y_tr']), (d['x_va'], d['y_va']), (d['x_te'], d['y_te']), int(d['n_classes']))

    if dataset == 'pamap2':
        tr, va, te, n_classes = _load_pamap2(data_dir, win_len)
    else:
        raise NotImplementedError('loader for {} lives in the notebooks for now'.format(dataset))

    np.savez_compressed(cache, x_tr=tr[0], y_tr=tr[1], x_va=va[0], y_va=va[1], x_te=te[0], y_te=te[1],
                        n_classes=n_classes)
    return tr, va, te, n_classes
