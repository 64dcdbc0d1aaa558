"""Small helpers shared by the PyTorch versions of the benchmark tasks."""
from __future__ import absolute_import
from __future__ import print_function

import os
import random
import logging

import numpy as np
import torch

logger = logging.getLogger(__name__)


def get_device(use_cuda=True, gpu_id=0):
    """Return the torch.device to train on.

    Falls back to CPU silently when CUDA was requested but no GPU is visible (e.g. when
    CUDA_VISIBLE_DEVICES is empty on a login node)."""
    if use_cuda and torch.cuda.is_available():
        return torch.device('cuda:{}'.format(gpu_id))
    if use_cuda:
        logger.warning("CUDA requested but not available -- running on CPU")
    return torch.device('cpu')


def set_seed(seed, deterministic=False):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    if deterministic:
        # cuDNN LSTM kernels are non-deterministic unless these are set
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    os.environ['PYTHONHASHSEED'] = str(seed)


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def batch_to_numpy(t):
    """Detach a (possibly GPU) tensor and return a numpy array."""
    if t.is_cuda:
        return t.detach().cpu().numpy()
    return t.detach().numpy()


def move_batch(batch, device, non_blocking=True):
    """Recursively move tensors in (nested) lists / tuples / dicts to `device`."""
    if torch.is_tensor(batch):
        return batch.to(device, non_blocking=non_blocking)
    if isinstance(batch, dict):
        return {k: move_batch(v, device, non_blocking) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(move_batch(v, device, non_blocking) for v in batch)
    return batch


def print_gpu_memory(prefix=""):
    if not torch.cuda.is_available():
        return
    alloc = torch.cuda.memory_allocated() / 1024 ** 2
    peak = torch.cuda.max_memory_allocated() / 1024 ** 2
    print("[{}] GPU memory: {:.0f} MiB allocated, {:.0f} MiB peak".format(prefix, alloc, peak))


class EarlyStopping(object):
    """Patience-based early stopping on a validation metric."""

    def __init__(self, patience=5, mode='max', min_delta=0.0):
        assert mode in ('max', 'min')
        self.patience = patience
        self.mode = mode
        self.min_delta = min_delta
        self.best = None
        self.bad_epochs = 0

    def _improved(self, value):
        if self.best is None:
            return True
        if self.mode == 'max':
            return value > self.best + self.min_delta
        return value < self.best - self.min_delta

    def is_best(self, value):
        return self._improved(value)

    def step(self, value):
        """Returns True when training should stop."""
        if self._improved(value):
            self.best = value
            self.bad_epochs = 0
            return False
        self.bad_epochs += 1
        return self.bad_epochs > self.patience


def save_checkpoint(path, model, optimizer=None, epoch=None, **extra):
    state = {'state_dict': model.state_dict(), 'epoch': epoch}
    if optimizer is not None:
        state['optimizer'] = optimizer.state_dict()
    state.update(extra)
    dirname = os.path.dirname(path)
    if dirname and not os.path.exists(dirname):
        os.makedirs(dirname)
    torch.save(state, path)


def load_checkpoint(path, model, optimizer=None, device='cpu'):
    state = torch.load(path, map_location=device)
    model.load_state_dict(state['state_dict'])
    if optimizer is not None and 'optimizer' in state:
        optimizer.load_state_dict(state['optimizer'])
    return state.get('epoch')


def pad_zeros(arr, min_length=None):
    """Pad a list of (T_i, C) arrays to the same length. Same as the Keras helper."""
    dtype = arr[0].dtype
    max_len = max([x.shape[0] for x in arr])
    ret = [np.concatenate([x, np.zeros((max_len - x.shape[0],) + x.shape[1:], dtype=dtype)], axis=0)
           for x in arr]
    if (min_length is not None) and ret[0].shape[0] < min_length:
        ret = [np.concatenate([x, np.zeros((min_length - x.shape[0],) + x.shape[1:], dtype=dtype)], axis=0)
               for x in ret]
    return np.array(ret)


def lengths_from_mask(mask):
    """mask: (B, T) numpy or tensor of 0/1 -> int64 tensor of sequence lengths (kept on CPU,
    which is what pack_padded_sequence wants)."""
    if not torch.is_tensor(mask):
        mask = torch.from_numpy(np.asarray(mask))
    return mask.sum(dim=1).long().cpu()
