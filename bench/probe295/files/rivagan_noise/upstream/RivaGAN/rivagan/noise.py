"""
Noise layers applied to the watermarked video during training.

All layers take and return tensors of shape (N, 3, L, H, W) with values in [-1, 1].
"""
import math
import random

import torch
from torch import nn
from torch.nn import functional as F


def _dct_matrix(n):
    """Orthonormal DCT-II matrix of size (n, n)."""
    mat = torch.zeros(n, n)
    for k in range(n):
        for i in range(n):
            w = math.sqrt(1.0 / n) if k == 0 else math.sqrt(2.0 / n)
            mat[k, i] = w * math.cos(math.pi * (i + 0.5) * k / n)
    return mat


_DCT_CACHE = {}


def dct_matrix(n):
    # cached on the GPU: building it every iteration on the CPU was a visible part of the step time
    if n not in _DCT_CACHE:
        _DCT_CACHE[n] = _dct_matrix(n).cuda()
    return _DCT_CACHE[n]


def dct_3d(x):
    """3-D DCT over the (L, H, W) axes of a (N, C, L, H, W) tensor."""
    _, _, L, H, W = x.size()
    x = torch.einsum("ncihw,li->nclhw", x, dct_matrix(L))
    x = torch.einsum("nclhw,ah->nclaw", x, dct_matrix(H))
    x = torch.einsum("nclaw,bw->nclab", x, dct_matrix(W))
    return x


def idct_3d(x):
    """Inverse of dct_3d (the matrices are orthonormal, so the inverse is the transpose)."""
    _, _, L, H, W = x.size()
    x = torch.einsum("nclab,bw->nclaw", x, dct_matrix(W))
    x = torch.einsum("nclaw,ah->nclhw", x, dct_matrix(H))
    x = torch.einsum("nclhw,li->ncihw", x, dct_matrix(L))
    return x


def rgb_to_yuv(image):
    r, g, b = image[:, 0], image[:, 1], image[:, 2]
    y = 0.299 * r + 0.587 * g + 0.114 * b
    u = -0.147 * r - 0.289 * g + 0.436 * b
    v = 0.615 * r - 0.515 * g - 0.100 * b
    return torch.stack([y, u, v], dim=1)


def yuv_to_rgb(image):
    y, u, v = image[:, 0], image[:, 1], image[:, 2]
    r = y + 1.14 * v
    g = y - 0.396 * u - 0.581 * v
    b = y + 2.029 * u
    return torch.stack([r, g, b], dim=1)


class Crop(nn.Module):
    """
    Randomly crops the two spatial dimensions independently to a new size
    that is between `min_pct` and `max_pct` of the old size.

    Input: (N, 3, L, H, W)
    Output: (N, 3, L, H', W')
    """

    def __init__(self, min_pct=0.8, max_pct=1.0):
        super(Crop, self).__init__()
        self.min_pct = min_pct
        self.max_pct = max_pct

    def _pct(self):
        return self.min_pct + random.random() * (self.max_pct - self.min_pct)

    def forward(self, frames):
        _, _, _, height, width = frames.size()
        dx = int(self._pct() * width)
        dy = int(self._pct() * height)
        dx, dy = (dx // 4) * 4, (dy // 4) * 4
        x = random.randint(0, width - dx - 1)
        y = random.randint(0, height - dy - 1)
        return frames[:, :, :, y:y + dy, x:x + dx]


class Scale(nn.Module):
    """
    Randomly scales the two spatial dimensions independently to a new size
    that is between `min_pct` and `max_pct` of the old size.

    Input: (N, 3, L, H, W)
    Output: (N, 3, L, H', W')
    """

    def __init__(self, min_pct=0.8, max_pct=1.0):
        super(Scale, self).__init__()
        self.min_pct = min_pct
        self.max_pct = max_pct

    def _pct(self):
        return self.min_pct + random.random() * (self.max_pct - self.min_pct)

    def forward(self, frames):
        percent = self._pct()
        _, _, depth, height, width = frames.size()
        height, width = int(percent * height), int(percent * width)
        height, width = (height // 4) * 4, (width // 4) * 4
        return nn.AdaptiveAvgPool3d((depth, height, width))(frames)


class GaussianNoise(nn.Module):
    """Additive white noise with a random standard deviation in [0, max_std]."""

    def __init__(self, max_std=0.05):
        super(GaussianNoise, self).__init__()
        self.max_std = max_std

    def forward(self, frames):
        std = random.random() * self.max_std
        noise = torch.cuda.FloatTensor(frames.size()).normal_(0, std)
        return torch.clamp(frames + noise, -1.0, 1.0)


class Compression(nn.Module):
    """
    This uses the DCT to produce a differentiable approximation of JPEG compression.

    Input: (N, 3, L, H, W)
    Output: (N, 3, L, H, W)
    """

    def __init__(self, yuv=False, min_pct=0.0, max_pct=0.5):
        super(Compression, self).__init__()
        self.yuv = yuv
        self.min_pct = min_pct
        self.max_pct = max_pct

    def forward(self, y):
        N, _, L, H, W = y.size()

        L = int(y.size(2) * (random.random() * (self.max_pct - self.min_pct) + self.min_pct))
        H = int(y.size(3) * (random.random() * (self.max_pct - self.min_pct) + self.min_pct))
        W = int(y.size(4) * (random.random() * (self.max_pct - self.min_pct) + self.min_pct))

        if self.yuv:
            y = torch.stack([rgb_to_yuv(y[:, :, i, :, :]) for i in range(y.size(2))], dim=2)

        y = dct_3d(y)

        if L > 0:
            y[:, :, -L:, :, :] = 0.0

        if H > 0:
            y[:, :, :, -H:, :] = 0.0

        if W > 0:
            y[:, :, :, :, -W:] = 0.0

        y = idct_3d(y)

        if self.yuv:
            y = torch.stack([yuv_to_rgb(y[:, :, i, :, :]) for i in range(y.size(2))], dim=2)

        return y


class RandomNoise(nn.Module):
    """Applies one of the noise layers above, chosen uniformly at random (or none)."""

    def __init__(self):
        super(RandomNoise, self).__init__()
        self.layers = nn.ModuleList([Crop(), Scale(), Compression(), GaussianNoise()])

    def forward(self, frames):
        idx = random.randint(0, len(self.layers))
        if idx == len(self.layers):
            return frames
        return self.layers[idx](frames)
