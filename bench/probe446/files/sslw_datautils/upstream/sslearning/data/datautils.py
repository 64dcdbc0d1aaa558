import numpy as np
import torch
from scipy.interpolate import CubicSpline
from transforms3d.axangles import axangle2mat


class RandomSwitchAxis:
    """
    Randomly switch the three axes for the raw files
    Input size: 3 * FEATURE_SIZE
    """

    def __call__(self, sample):
        x = sample[0, :]
        y = sample[1, :]
        z = sample[2, :]

        choice = np.random.randint(6)
        if choice == 0:
            sample = torch.stack([x, y, z], dim=0)
        elif choice == 1:
            sample = torch.stack([x, z, y], dim=0)
        elif choice == 2:
            sample = torch.stack([y, x, z], dim=0)
        elif choice == 3:
            sample = torch.stack([y, z, x], dim=0)
        elif choice == 4:
            sample = torch.stack([z, x, y], dim=0)
        elif choice == 5:
            sample = torch.stack([z, y, x], dim=0)
        return sample


class RotationAxis:
    """
    Rotation along an axis
    """

    def __call__(self, sample):
        sample = np.swapaxes(sample, 0, 1)
        angle = np.random.uniform(low=-np.pi, high=np.pi)
        axis = np.random.uniform(low=-1, high=1, size=sample.shape[1])
        sample = np.matmul(sample, axangle2mat(axis, angle))
        sample = np.swapaxes(sample, 0, 1)
        return sample


def flip(X, choice):
    """Arrow of time: reverse the window along the time axis."""
    if choice == 1:
        X = np.flip(X, 1)
    return X


def permute(X, n_perm=4, min_seg_length=10):
    """Cut the window in n_perm segments and shuffle them."""
    while True:
        segs = np.append(0, np.sort(np.random.randint(min_seg_length, X.shape[1] - min_seg_length, n_perm - 1)))
        segs = np.append(segs, X.shape[1])
        if np.min(np.diff(segs)) >= min_seg_length:
            break
    idx = np.random.permutation(n_perm)
    X_new = np.concatenate([X[:, segs[i]:segs[i + 1]] for i in idx], axis=1)
    return X_new


def is_scaling_factor_invalid(scaling_factor, min_scale_sigma):
    """
    Ensure each of the abs values of the scaling
    factors are greater than the min
    """
    for i in range(len(scaling_factor)):
        if abs(scaling_factor[i] - 1) < min_scale_sigma:
            return True
    return False


def scale(X, scale_range=0.5, min_scale_diff=0.15):
    scaling_factor = np.random.uniform(low=1 - scale_range, high=1 + scale_range, size=(X.shape[0]))
    while is_scaling_factor_invalid(scaling_factor, min_scale_diff):
        scaling_factor = np.random.uniform(low=1 - scale_range, high=1 + scale_range, size=(X.shape[0]))
    my_scaling = np.repeat(scaling_factor[:, np.newaxis], X.shape[1], axis=1)
    return X * my_scaling


def generate_random_curve(X, sigma=0.2, knot=4):
    xx = (np.ones((X.shape[1], 1)) * (np.arange(0, X.shape[0], (X.shape[0] - 1) / (knot + 1)))).transpose()
    yy = np.random.normal(loc=1.0, scale=sigma, size=(knot + 2, X.shape[1]))
    x_range = np.arange(X.shape[0])
    cs = [CubicSpline(xx[:, i], yy[:, i]) for i in range(X.shape[1])]
    return np.array([c(x_range) for c in cs]).transpose()


def distort_time_steps(X, sigma=0.2):
    tt = generate_random_curve(X, sigma)
    tt_cum = np.cumsum(tt, axis=0)
    t_scale = [(X.shape[0] - 1) / tt_cum[-1, i] for i in range(X.shape[1])]
    for i in range(X.shape[1]):
        tt_cum[:, i] = tt_cum[:, i] * t_scale[i]
    return tt_cum


def time_warp(X, sigma=0.2):
    X = np.swapaxes(X, 0, 1)
    tt_new = distort_time_steps(X, sigma)
    X_new = np.zeros(X.shape)
    x_range = np.arange(X.shape[0])
    for i in range(X.shape[1]):
        X_new[:, i] = np.interp(x_range, tt_new[:, i], X[:, i])
    return np.swapaxes(X_new, 0, 1)
