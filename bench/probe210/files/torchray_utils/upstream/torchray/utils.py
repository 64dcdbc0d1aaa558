# Copyright (c) Facebook, Inc. and its affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

r"""This module contains miscellaneous utilities used throughout TorchRay:
device selection, image display and smoothing, and the configuration file.
"""

import math
import os
import pathlib
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F

__all__ = [
    'get_config',
    'get_device',
    'imarray',
    'imsc',
    'imsmooth',
    'resample',
    'tensor_to_im',
    'xmkdir',
]

_DEFAULT_CONFIG = {
    'mongo': {
        'server': 'mongod',
        'hostname': 'localhost',
        'port': 27017,
        'database': './data/db'
    },
    'benchmark': {
        'voc_dir': './data/datasets/voc',
        'coco_dir': './data/datasets/coco',
        'coco_anno_dir': './data/datasets/coco/annotations',
        'imagenet_dir': './data/datasets/imagenet',
        'models_dir': './data/models',
        'experiments_dir': './data'
    }
}

_config_read = False


def get_config():
    """Read the TorchRay config file.

    Read the config file from the current directory or the user's home
    directory and return the configuration.

    Returns:
        dict: configuration.
    """
    global _config_read
    config = _DEFAULT_CONFIG
    if _config_read:
        return config

    def _update(source, delta):
        if isinstance(source, dict):
            assert isinstance(delta, dict)
            for k in source.keys():
                if k in delta:
                    source[k] = _update(source[k], delta[k])
            for k in delta.keys():
                # Catch name errors in config file.
                assert k in source
        else:
            source = delta
        return source

    config = _DEFAULT_CONFIG
    for curr_dir in os.curdir, pathlib.Path.home():
        path = os.path.join(curr_dir, '.torchrayrc')
        if os.path.exists(path):
            import json
            with open(path, 'r') as file:
                config_ = json.load(file)
                _update(config, config_)
            break

    _config_read = True
    return config


def get_device(gpu=0):
    r"""Get the :class:`torch.device` to use; specify device with :attr:`gpu`.

    Args:
        gpu (int, optional): Index of the GPU device; specify ``None`` to
            force CPU. Default: ``0``.

    Returns:
        :class:`torch.device`: device to use.
    """
    device = torch.device(
        f'cuda:{gpu}'
        if torch.cuda.is_available() and gpu is not None
        else 'cpu')
    return device


def xmkdir(path):
    r"""Create a directory path recursively.

    The function creates :attr:`path` if the directory does not exist.

    Args::
        path (str): path to create.
    """
    if path is not None and not os.path.exists(path):
        try:
            os.makedirs(path)
        except FileExistsError:
            # Race condition in multi-processing.
            pass


def is_dict(x):
    r"""Check if an object is a :class:`dict`."""
    return isinstance(x, dict) or isinstance(x, OrderedDict)


def imsmooth(tensor,
             sigma,
             stride=1,
             padding=0,
             padding_mode='constant',
             padding_value=0):
    r"""Apply a 2D Gaussian filter to a tensor.

    The 2D filter itself is implementing by separating the 2D convolution in
    two 1D convolutions, first along the vertical direction and then along
    the horizontal one. Each 1D Gaussian kernel is given by:

    .. math::
             f_i \propto \exp\left(-\frac{1}{2} \frac{i^2}{\sigma^2} \right),
                ~~~ i \in \{-W,\dots,W\},
                ~~~ W = \lceil 4\sigma \rceil.

    This kernel is normalized to sum to one exactly.

    Args:
        tensor (:class:`torch.Tensor`): :math:`N\times C\times H\times W`
            image tensor.
        sigma (float): standard deviation of the Gaussian kernel.
        stride (int, optional): subsampling factor. Default: ``1``.
        padding (int, optional): extra padding. Default: ``0``.
        padding_mode (str, optional): ``'constant'``, ``'reflect'`` or
            ``'replicate'``. Default: ``'constant'``.
        padding_value (float, optional): constant value for the
            `constant` padding mode. Default: ``0``.

    Returns:
        :class:`torch.Tensor`: :math:`N\times C\times H\times W` tensor with
        the smoothed images.
    """
    assert sigma >= 0
    width = math.ceil(4 * sigma)
    filt = (torch.arange(-width,
                         width + 1,
                         dtype=torch.float32,
                         device=tensor.device) /
            (math.sqrt(2) * sigma + 1e-20))
    filt = torch.exp(-filt * filt)
    filt /= torch.sum(filt)
    num_channels = tensor.shape[1]
    width = width + padding
    if padding_mode == 'constant' and padding_value == 0:
        other_padding = width
        x = tensor
    else:
        # pad: (before, after) pairs starting from last dimension backward
        x = F.pad(tensor,
                  (width, width, width, width),
                  mode=padding_mode,
                  value=padding_value)
        other_padding = 0
        padding = 0
    x = F.conv2d(x,
                 filt.reshape((1, 1, -1, 1)).expand(num_channels, -1, -1, -1),
                 padding=(other_padding, padding),
                 stride=(stride, 1),
                 groups=num_channels)
    x = F.conv2d(x,
                 filt.reshape((1, 1, 1, -1)).expand(num_channels, -1, -1, -1),
                 padding=(padding, other_padding),
                 stride=(1, stride),
                 groups=num_channels)
    return x


def imarray(tensor):
    r"""Convert a tensor to an image array.

    The function converts a :math:`1\times C\times H\times W` or
    :math:`C\times H\times W` tensor to a :math:`H\times W\times C` NumPy
    array. The tensor is moved to the CPU first.
    """
    tensor = tensor.detach().cpu()
    if tensor.dim() == 4:
        assert tensor.shape[0] == 1
        tensor = tensor[0]
    return tensor.permute(1, 2, 0).numpy()


def tensor_to_im(tensor):
    r"""Alias of :func:`imarray` kept for old notebooks."""
    return imarray(tensor)


def imsc(img, *args, quiet=False, lim=None, interpolation='lanczos', **kwargs):
    r"""Rescale and displays an image represented as a img.

    The function scales the img :attr:`im` to the [0 ,1] range.
    The img is assumed to have shape :math:`3\times H\times W` (RGB)
    :math:`1\times H\times W` (grayscale).

    Args:
        img (:class:`torch.Tensor` or :class:`PIL.Image`): image.
        quiet (bool, optional): if False, do not display image.
            Default: ``False``.
        lim (list, optional): maximum and minimum intensity value for
            rescaling. Default: ``None``.
        interpolation (str, optional): The interpolation mode to use with
            :func:`matplotlib.pyplot.imshow` (e.g. ``'lanczos'`` or
            ``'nearest'``). Default: ``'lanczos'``.

    Returns:
        :class:`torch.Tensor`: Rescaled image img.
    """
    import matplotlib.pyplot as plt

    if isinstance(img, np.ndarray):
        img = torch.from_numpy(img)
    handle = None
    with torch.no_grad():
        if not lim:
            lim = [img.min(), img.max()]
        img = img - lim[0]  # also makes a copy
        img.mul_(1 / (lim[1] - lim[0]))
        img = torch.clamp(img, min=0, max=1)
        if not quiet:
            bitmap = img.expand(3,
                                *img.shape[1:]).permute(1, 2, 0).cpu().numpy()
            handle = plt.imshow(
                bitmap, *args, interpolation=interpolation, **kwargs)
            curr_ax = plt.gca()
            curr_ax.axis('off')
    return img, handle


def resample(source, target_size, transform):
    r"""Spatially resample a tensor.

    The function samples the :attr:`source` tensor at the locations
    obtained by applying the affine :attr:`transform` to a regular grid of
    size :attr:`target_size`.

    Args:
        source (:class:`torch.Tensor`): :math:`N\times C\times H\times W`
            tensor.
        target_size (tuple of int): target :math:`(H', W')`.
        transform (:class:`torch.Tensor`): :math:`N\times 2\times 3`
            affine transform (normalized coordinates).

    Returns:
        :class:`torch.Tensor`: :math:`N\times C\times H'\times W'` tensor.
    """
    grid = F.affine_grid(transform,
                         (source.shape[0], source.shape[1], *target_size),
                         align_corners=False)
    return F.grid_sample(source, grid, mode='bilinear', padding_mode='zeros',
                         align_corners=False)
