"""
Copyright 2019, ETH Zurich

This file is part of L3C-PyTorch.

L3C-PyTorch is free software: you can redistribute it and/or modify
it under the terms of the GNU General Public License as published by
the Free Software Foundation, either version 3 of the License, or
any later version.

L3C-PyTorch is distributed in the hope that it will be useful,
but WITHOUT ANY WARRANTY; without even the implied warranty of
MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
GNU General Public License for more details.

You should have received a copy of the GNU General Public License
along with L3C-PyTorch.  If not, see <https://www.gnu.org/licenses/>.
"""
import os
from contextlib import contextmanager

import numpy as np
import torch
import torch.backends.cudnn
import torch.nn as nn
import torch.nn.functional as F
from fjcommon import functools_ext as ft


cpu_device = torch.device('cpu')
DEVICE = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
NUM_WORKERS = int(os.environ.get('NUM_WORKERS', 8))

# enable autotuner; input sizes are fixed during training
torch.backends.cudnn.benchmark = True


def set_device(cuda_available):
    global DEVICE
    DEVICE = torch.device('cuda:0' if cuda_available else 'cpu')


def default_device():
    return DEVICE


def tensor_to_np(t):
    return t.detach().cpu().numpy()


def histogram(t, L):
    """
    A: If t is a list of tensors/np.ndarrays, B is executed for all, yielding len(ts) histograms, which are summed
    per bin
    B: convert t to numpy, count bins.
    :param t: tensor or list of tensor, each expected to be in [0, L)
    :param L: number of symbols
    :return: length-L array, containing at l the number of values mapping to to symbol l
    """
    if isinstance(t, list):
        ts = t
        histograms = np.stack((histogram(t, L) for t in ts), axis=0)  # get array (len(ts) x L)
        return np.sum(histograms, 0)
    assert 0 <= t.min() and t.max() < L, (t.min(), t.max())
    a = tensor_to_np(t)
    counts, _ = np.histogram(a, np.arange(L+1))  # +1 because np.histogram takes bin edges, including rightmost edge
    return counts


def one_hot(x, L, Ldim):
    """ add dim L at Ldim """
    assert Ldim >= 0 or Ldim == -1, f'Only supporting Ldim >= 0 or Ldim == -1: {Ldim}'
    out_shape = list(x.shape)
    if Ldim == -1:
        out_shape.append(L)
    else:
        out_shape.insert(Ldim, L)
    x = x.unsqueeze(Ldim)  # x must match # dims of outshape
    assert x.dim() == len(out_shape), (x.shape, out_shape)
    oh = torch.zeros(*out_shape, dtype=torch.float32, device=x.device)
    oh.scatter_(Ldim, x, 1)
    return oh


@contextmanager
def use_device(dev):
    """ Temporarily overwrite the module-level device, e.g. to run the coder on CPU """
    global DEVICE
    prev = DEVICE
    DEVICE = dev
    try:
        yield
    finally:
        DEVICE = prev


def get_total_grad_norm(params, norm_type=2):
    # We fix the norm type to 2 here, since we only need that.
    total_norm = 0
    for p in params:
        if p.grad is None:
            continue
        param_norm = p.grad.data.norm(norm_type)
        total_norm += param_norm.item() ** norm_type
    total_norm = total_norm ** (1. / norm_type)
    return total_norm


def get_average_grad_norm(params, norm_type=2):
    norms = [p.grad.data.norm(norm_type).item() for p in params if p.grad is not None]
    return sum(norms) / max(len(norms), 1)


def weights_init(m):
    if isinstance(m, nn.Conv2d):
        nn.init.xavier_normal_(m.weight)
        if m.bias is not None:
            m.bias.data.zero_()


class BatchSplitter(object):
    """ Splits a batch into chunks so that evaluation of huge images fits into GPU memory """
    def __init__(self, max_batch_size):
        self.max_batch_size = max_batch_size

    def split(self, x):
        return torch.split(x, self.max_batch_size, dim=0)

    @staticmethod
    def merge(outs):
        return torch.cat(outs, dim=0)


class LambdaModule(nn.Module):
    def __init__(self, forward_lambda, name=''):
        super(LambdaModule, self).__init__()
        self.forward_lambda = forward_lambda
        self.description = 'LambdaModule({})'.format(name)

    def __repr__(self):
        return self.description

    def forward(self, x):
        return self.forward_lambda(x)


class ChannelToLogitsTranspose(nn.Module):
    def __init__(self, Cout, Lout):
        super(ChannelToLogitsTranspose, self).__init__()
        self.Cout = Cout
        self.Lout = Lout

    def forward(self, x):
        N, C, H, W = x.shape
        # unfold channel dimension into (Cout, Lout) and move Lout to the end
        return x.view(N, self.Cout, self.Lout, H, W)

    def __repr__(self):
        return 'ChannelToLogitsTranspose(Cout={}, Lout={})'.format(self.Cout, self.Lout)


class LogitsToChannelTranspose(nn.Module):
    def __init__(self):
        super(LogitsToChannelTranspose, self).__init__()

    def forward(self, x):
        N, C, L, H, W = x.shape
        return x.view(N, C * L, H, W)

    def __repr__(self):
        return 'LogitsToChannelTranspose()'


def channel_last(x):
    """ NCHW -> NHWC """
    return x.permute(0, 2, 3, 1)


def channel_first(x):
    """ NHWC -> NCHW """
    return x.permute(0, 3, 1, 2)


def get_num_params(module, only_trainable=False):
    return sum(p.numel() for p in module.parameters()
               if not only_trainable or p.requires_grad)


@ft.return_list
def iter_modules_of_class(root_module: nn.Module, cls):
    """ Helpful for extracting modules of some class """
    for m in root_module.modules():
        if isinstance(m, cls):
            yield m


def assert_equal(t1, t2, msg=''):
    assert torch.allclose(t1, t2), msg + '\n{}\n{}'.format(t1, t2)


def gather_flat(x, idx):
    """ flat gather used by the logistic mixture to select the component params """
    return torch.gather(x.reshape(x.shape[0], -1), 1, idx.reshape(idx.shape[0], -1)).view_as(idx)
