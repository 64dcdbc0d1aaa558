r"""
    Utils for PyTorch: seeding, device selection, checkpoints, and RNN building blocks shared by the
    inertial pose networks.
"""


__all__ = ['set_seed', 'get_device', 'to_device', 'to_numpy', 'count_parameters', 'gpu_memory_str',
           'save_checkpoint', 'load_checkpoint', 'RNN', 'RNNWithInit', 'RNNLossWrapper', 'EarlyStopping',
           'smooth_avg', 'has_nan', 'WarmupScheduler', 'move_rnn_state']


import os
import random

import numpy as np
import torch
import torch.nn as nn
from torch.nn.functional import relu
from torch.nn.utils.rnn import pack_sequence, pad_packed_sequence, pad_sequence


def set_seed(seed, deterministic=False):
    r"""
    Set the random seed of python, numpy and torch (all devices).
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    if deterministic:
        # cuDNN LSTM is non-deterministic in the backward pass unless these are set
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        os.environ['CUBLAS_WORKSPACE_CONFIG'] = ':4096:8'


def get_device(gpu=0):
    r"""
    Return the torch.device to run on: the `gpu`-th CUDA device if available, otherwise CPU.
    A negative `gpu` forces CPU.
    """
    if gpu is None or gpu < 0:
        return torch.device('cpu')
    if torch.cuda.is_available():
        return torch.device('cuda:%d' % gpu)
    print('[articulate] warning: CUDA not available, running on CPU')
    return torch.device('cpu')


def to_device(obj, device, non_blocking=False):
    r"""
    Recursively move tensors in (nested) lists / tuples / dicts to `device`.
    """
    if isinstance(obj, torch.Tensor):
        return obj.to(device, non_blocking=non_blocking)
    if isinstance(obj, dict):
        return {k: to_device(v, device, non_blocking) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_device(v, device, non_blocking) for v in obj)
    return obj


def to_numpy(x):
    r"""
    Tensor (any device) -> numpy array.
    """
    if isinstance(x, np.ndarray):
        return x
    return x.detach().cpu().numpy() if x.is_cuda else x.detach().numpy()


def count_parameters(model: nn.Module):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def gpu_memory_str():
    r"""
    Current / peak allocated GPU memory as a short string for the training log.
    """
    cur = torch.cuda.memory_allocated() / 1024 ** 2
    peak = torch.cuda.max_memory_allocated() / 1024 ** 2
    return 'mem %.0fM (peak %.0fM)' % (cur, peak)


def save_checkpoint(path, model, optimizer=None, epoch=None, **extra):
    os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
    state = {'model': model.state_dict(), 'epoch': epoch}
    if optimizer is not None:
        state['optimizer'] = optimizer.state_dict()
    state.update(extra)
    torch.save(state, path)


def load_checkpoint(path, model, optimizer=None, map_location='cuda'):
    r"""
    Load a checkpoint written by `save_checkpoint`. Returns the stored epoch (or None).
    """
    state = torch.load(path, map_location=map_location)
    model.load_state_dict(state['model'] if 'model' in state else state)
    if optimizer is not None and 'optimizer' in state:
        optimizer.load_state_dict(state['optimizer'])
    return state.get('epoch', None)


class RNN(nn.Module):
    r"""
    An RNN net including a linear input layer, an RNN, and a linear output layer.
    """
    def __init__(self, input_size: int, output_size: int, hidden_size: int, num_rnn_layer: int,
                 rnn_type='lstm', bidirectional=False, dropout=0., load_weight_file: str = None):
        r"""
        Init an RNN.

        :param input_size: Input size.
        :param output_size: Output size.
        :param hidden_size: Hidden size for RNN.
        :param num_rnn_layer: Number of RNN layers.
        :param rnn_type: Select from 'rnn', 'lstm', 'gru'.
        :param bidirectional: Whether if the RNN is bidirectional.
        :param dropout: Dropout after the input linear layer and in the rnn.
        :param load_weight_file: If not None and exists, weights will be loaded.
        """
        super().__init__()
        self.rnn = getattr(nn, rnn_type.upper())(hidden_size, hidden_size, num_rnn_layer,
                                                 bidirectional=bidirectional, dropout=dropout)
        self.linear1 = nn.Linear(input_size, hidden_size)
        self.linear2 = nn.Linear(hidden_size * (2 if bidirectional else 1), output_size)
        self.dropout = nn.Dropout(dropout)
        self.num_layers = num_rnn_layer
        self.num_directions = 2 if bidirectional else 1
        self.hidden_size = hidden_size

        if load_weight_file and os.path.exists(load_weight_file):
            self.load_state_dict(torch.load(load_weight_file, map_location='cpu'))
            self.eval()

    def forward(self, x, init=None):
        r"""
        Forward. Input is a list of tensors in shape [num_frames, input_size] (variable length).
        """
        length = [_.shape[0] for _ in x]
        x = self.dropout(relu(self.linear1(pad_sequence(x))))
        x = self.rnn(pack_sequence([x[:l, i] for i, l in enumerate(length)], enforce_sorted=False), init)[0]
        x = self.linear2(pad_packed_sequence(x)[0])
        return [x[:l, i].clone() for i, l in enumerate(length)]


class RNNWithInit(RNN):
    r"""
    RNN with the initial hidden states regressed from the first output.
    """
    def __init__(self, input_size: int, output_size: int, hidden_size: int, num_rnn_layer: int,
                 rnn_type='lstm', bidirectional=False, dropout=0., load_weight_file: str = None):
        assert rnn_type == 'lstm' and bidirectional is False
        super().__init__(input_size, output_size, hidden_size, num_rnn_layer, rnn_type, bidirectional, dropout)

        self.init_net = torch.nn.Sequential(
            torch.nn.Linear(output_size, hidden_size),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden_size, hidden_size * num_rnn_layer),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden_size * num_rnn_layer, 2 * (2 if bidirectional else 1) * num_rnn_layer * hidden_size)
        )

        if load_weight_file and os.path.exists(load_weight_file):
            self.load_state_dict(torch.load(load_weight_file, map_location='cpu'))
            self.eval()

    def forward(self, x, _=None):
        r"""
        Forward. Input is a list of (x, x_init) tuples.
        """
        x, x_init = list(zip(*x))
        nd, nh, nl, h = self.num_directions, self.hidden_size, self.num_layers, self.init_net(torch.stack(x_init))
        h = h.view(-1, 2, nd * nl, nh).permute(1, 2, 0, 3)
        return super(RNNWithInit, self).forward(x, (h[0].contiguous(), h[1].contiguous()))


class RNNLossWrapper:
    r"""
    Loss wrapper for `articulate.utils.torch.RNN`.
    """
    def __init__(self, loss_fn):
        self.loss_fn = loss_fn

    def __call__(self, y_pred, y_true):
        return self.loss_fn(torch.cat(y_pred), torch.cat(y_true))


class EarlyStopping:
    def __init__(self, patience=20, min_delta=0.0):
        self.patience = patience
        self.min_delta = min_delta
        self.best = float('inf')
        self.counter = 0

    def step(self, value):
        if value < self.best - self.min_delta:
            self.best = value
            self.counter = 0
            return False
        self.counter += 1
        return self.counter >= self.patience


def smooth_avg(x: torch.Tensor, kernel_size=5):
    r"""
    Moving average over the first dim (keeps device and length).
    """
    pad = kernel_size // 2
    xp = torch.cat([x[:1].expand(pad, *x.shape[1:]), x, x[-1:].expand(pad, *x.shape[1:])])
    w = torch.ones(kernel_size, device=x.device, dtype=x.dtype) / kernel_size
    return torch.stack([xp[i:i + x.shape[0]] * w[i] for i in range(kernel_size)]).sum(dim=0)


def has_nan(x):
    if isinstance(x, (list, tuple)):
        return any(has_nan(_) for _ in x)
    return bool(torch.isnan(x).any())


class WarmupScheduler:
    r"""
    Linear warm-up for `warmup_steps`, then hands over to `after` (any torch lr scheduler) every epoch.
    """
    def __init__(self, optimizer, warmup_steps, after=None):
        self.optimizer = optimizer
        self.warmup_steps = warmup_steps
        self.after = after
        self.base_lrs = [g['lr'] for g in optimizer.param_groups]
        self.step_num = 0

    def step_batch(self):
        self.step_num += 1
        if self.step_num <= self.warmup_steps:
            scale = self.step_num / max(1, self.warmup_steps)
            for g, lr in zip(self.optimizer.param_groups, self.base_lrs):
                g['lr'] = lr * scale

    def step_epoch(self, metric=None):
        if self.after is None or self.step_num < self.warmup_steps:
            return
        if isinstance(self.after, torch.optim.lr_scheduler.ReduceLROnPlateau):
            self.after.step(metric)
        else:
            self.after.step()


def move_rnn_state(state, device):
    r"""
    Move an LSTM (h, c) tuple or GRU h tensor to `device` (used when switching between the
    GPU network and the CPU physics module in online inference).
    """
    if state is None:
        return None
    if isinstance(state, tuple):
        return tuple(s.to(device) for s in state)
    return state.to(device)
