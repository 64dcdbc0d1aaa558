
import torch

from torch.utils.data import Subset
import numpy as np
import math


class PolyOptimizer(torch.optim.SGD):

    def __init__(self, params, lr, weight_decay, max_step, momentum=0.9):
        super().__init__(params, lr, weight_decay)

        self.global_step = 0
        self.max_step = max_step
        self.momentum = momentum

        self.__initial_lr = [group['lr'] for group in self.param_groups]


    def step(self, closure=None):

        if self.global_step < self.max_step:
            lr_mult = (1 - self.global_step / self.max_step) ** self.momentum

            for i in range(len(self.param_groups)):
                self.param_groups[i]['lr'] = self.__initial_lr[i] * lr_mult

        super().step(closure)

        self.global_step += 1


class SGDROptimizer(torch.optim.SGD):

    def __init__(self, params, steps_per_epoch, lr=0, weight_decay=0, epoch_start=1, restart_mult=2):
        super().__init__(params, lr, weight_decay)

        self.global_step = 0
        self.local_step = 0
        self.total_restart = 0

        self.max_step = steps_per_epoch * epoch_start
        self.restart_mult = restart_mult

        self.__initial_lr = [group['lr'] for group in self.param_groups]


    def step(self, closure=None):

        if self.local_step >= self.max_step:
            self.local_step = 0
            self.max_step *= self.restart_mult
            self.total_restart += 1

        lr_mult = (1 + math.cos(math.pi * self.local_step / self.max_step))/2 / (self.total_restart + 1)

        for i in range(len(self.param_groups)):
            self.param_groups[i]['lr'] = self.__initial_lr[i] * lr_mult

        super().step(closure)

        self.local_step += 1
        self.global_step += 1


def split_dataset(dataset, n_splits):

    return [Subset(dataset, np.arange(i, len(dataset), n_splits)) for i in range(n_splits)]


def gap2d(x, keepdims=False):
    out = torch.mean(x.view(x.size(0), x.size(1), -1), -1)
    if keepdims:
        out = out.view(out.size(0), out.size(1), 1, 1)

    return out


def get_num_gpus():
    """Number of GPUs the CAM / sem-seg inference steps will spawn workers on."""
    return max(torch.cuda.device_count(), 1)


def to_device_batch(pack, keys=('img', 'label')):
    """Move the selected entries of a dataloader pack to the default GPU."""
    out = dict(pack)
    for k in keys:
        if k in out and torch.is_tensor(out[k]):
            out[k] = out[k].cuda(non_blocking=True)
    return out


def load_state_dict_flexible(model, path, strict=True):
    """Load weights saved either from a bare model or from nn.DataParallel (``module.`` prefix)."""
    state_dict = torch.load(path, map_location='cpu')
    if any(k.startswith('module.') for k in state_dict.keys()):
        state_dict = {k[len('module.'):]: v for k, v in state_dict.items()}
    model.load_state_dict(state_dict, strict=strict)
    return model


def freeze_bn(module):
    for m in module.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.eval()
            m.weight.requires_grad = False
            m.bias.requires_grad = False


def count_parameters(model, trainable_only=True):
    return sum(p.numel() for p in model.parameters() if (p.requires_grad or not trainable_only))


def set_requires_grad(modules, flag):
    if not isinstance(modules, (list, tuple)):
        modules = [modules]
    for m in modules:
        for p in m.parameters():
            p.requires_grad = flag


def strip_dataparallel_prefix(state_dict):
    """nn.DataParallel saves 'module.xxx' keys; the CAM/IRN nets are loaded without the wrapper."""
    new_state_dict = {}
    for k, v in state_dict.items():
        new_state_dict[k[7:] if k.startswith('module.') else k] = v
    return new_state_dict


class AverageMeterDict(object):
    def __init__(self):
        self.sums = {}
        self.counts = {}

    def add(self, d, n=1):
        for k, v in d.items():
            if torch.is_tensor(v):
                v = v.detach().float().mean().item()
            self.sums[k] = self.sums.get(k, 0.0) + v * n
            self.counts[k] = self.counts.get(k, 0) + n

    def get(self, k):
        return self.sums[k] / max(self.counts[k], 1)

    def reset(self):
        self.sums.clear()
        self.counts.clear()
