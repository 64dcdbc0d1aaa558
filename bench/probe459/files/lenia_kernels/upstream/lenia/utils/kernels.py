"""Kernel cores and growth mappings of Lenia, in numpy and torch flavours.

kn / gn indices follow Bert Chan's original code:
    kernel core  0: exponential bump, 1: polynomial (quad4), 2: step, 3: staircase
    growth       0: polynomial, 1: exponential (gaussian), 2: step
"""
import math

import numpy as np
import torch


def kernel_core_np(r, kn):
    if kn == 0:
        return np.exp(4 - 1 / np.maximum(r * (1 - r), 1e-10))
    if kn == 1:
        return (4 * r * (1 - r)) ** 4
    if kn == 2:
        return ((r >= 0.25) & (r <= 0.75)).astype(np.float64)
    if kn == 3:
        return ((r >= 0.25) & (r <= 0.75)).astype(np.float64) + (r < 0.25) * 0.5
    raise ValueError(kn)


def growth_np(u, m, s, gn):
    if gn == 0:
        return np.maximum(0, 1 - (u - m) ** 2 / (9 * s ** 2)) ** 4 * 2 - 1
    if gn == 1:
        return np.exp(-((u - m) ** 2) / (2 * s ** 2)) * 2 - 1
    if gn == 2:
        return (np.abs(u - m) <= s) * 2.0 - 1
    raise ValueError(gn)


def kernel_core_torch(r, kn):
    if kn == 0:
        return torch.exp(4 - 1 / torch.clamp(r * (1 - r), min=1e-10))
    if kn == 1:
        return (4 * r * (1 - r)) ** 4
    if kn == 2:
        return ((r >= 0.25) & (r <= 0.75)).to(r.dtype)
    if kn == 3:
        return ((r >= 0.25) & (r <= 0.75)).to(r.dtype) + (r < 0.25).to(r.dtype) * 0.5
    raise ValueError(kn)


def growth_torch(u, m, s, gn):
    if gn == 0:
        return torch.clamp(1 - (u - m) ** 2 / (9 * s ** 2), min=0) ** 4 * 2 - 1
    if gn == 1:
        return torch.exp(-((u - m) ** 2) / (2 * s ** 2)) * 2 - 1
    if gn == 2:
        return (torch.abs(u - m) <= s).to(u.dtype) * 2.0 - 1
    raise ValueError(gn)


def ring_kernel_np(size, R, b, kn=0):
    """Full-size kernel (centred) for the numpy/cupy simulator."""
    mid = size // 2
    y, x = np.ogrid[-mid : size - mid, -mid : size - mid]
    D = np.sqrt(x ** 2 + y ** 2) / R
    k = len(b)
    kr = k * D
    bs = np.asarray(b)[np.minimum(kr.astype(int), k - 1)]
    kernel = (D < 1) * kernel_core_np(kr % 1, kn) * bs
    return kernel / kernel.sum()


def kernel_fft_np(size, R, b, kn=0):
    kernel = ring_kernel_np(size, R, b, kn)
    return np.fft.fft2(np.fft.fftshift(kernel))


def gaussian_blob(size, radius, center=None, amplitude=1.0):
    if center is None:
        center = (size / 2.0, size / 2.0)
    y, x = np.mgrid[0:size, 0:size]
    d2 = (x - center[0]) ** 2 + (y - center[1]) ** 2
    return amplitude * np.exp(-d2 / (2.0 * radius ** 2))


def random_patch(size, patch_size, density=0.5, rng=None):
    rng = np.random.default_rng() if rng is None else rng
    world = np.zeros((size, size), dtype=np.float64)
    lo = (size - patch_size) // 2
    patch = rng.random((patch_size, patch_size)) * (rng.random((patch_size, patch_size)) < density)
    world[lo : lo + patch_size, lo : lo + patch_size] = patch
    return world


ORBIUM = {
    "name": "Orbium bicaudatus",
    "R": 13,
    "T": 10,
    "b": [1.0],
    "m": 0.15,
    "s": 0.015,
    "kn": 0,
    "gn": 1,
    "cells": None,  # filled from data/animals.json at runtime
}


def radius_scaled(params, scale):
    p = dict(params)
    p["R"] = int(math.ceil(params["R"] * scale))
    return p
