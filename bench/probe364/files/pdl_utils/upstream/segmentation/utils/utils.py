# ------------------------------------------------------------------------------
# Utility functions.
# Written by Bowen Cheng (bcheng9@illinois.edu)
# ------------------------------------------------------------------------------
import os
import logging
from collections import OrderedDict

import torch
from torch.nn.parallel import DistributedDataParallel


def get_loss_info_str(loss_meter_dict):
    msg = ''
    for key in loss_meter_dict.keys():
        msg += '{name}: {meter.val:.3e} ({meter.avg:.3e})\t'.format(
            name=key, meter=loss_meter_dict[key]
        )

    return msg


def to_cuda(batch, device):
    """Moves every tensor in a (possibly nested) batch dict to `device`.

    Despite the name this is device agnostic: it only calls `.to(device)`.
    """
    if type(batch) == torch.Tensor:
        batch = batch.to(device)
    elif type(batch) == dict:
        for key in batch.keys():
            batch[key] = to_cuda(batch[key], device)
    elif type(batch) == list:
        for i in range(len(batch)):
            batch[i] = to_cuda(batch[i], device)
    return batch


def get_module(model, distributed):
    if distributed:
        return model.module
    else:
        return model


def count_parameters(model, trainable_only=True):
    params = model.parameters()
    if trainable_only:
        params = filter(lambda p: p.requires_grad, params)
    return sum(p.numel() for p in params)


def strip_prefix_if_present(state_dict, prefix='module.'):
    """Removes a DDP prefix from checkpoint keys so weights can be loaded into a bare model."""
    keys = sorted(state_dict.keys())
    if not all(key.startswith(prefix) for key in keys):
        return state_dict
    stripped_state_dict = OrderedDict()
    for key, value in state_dict.items():
        stripped_state_dict[key[len(prefix):]] = value
    return stripped_state_dict


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count if self.count != 0 else 0


def log_model_summary(model, logger=None):
    """Logs parameter counts per top-level child."""
    if logger is None:
        logger = logging.getLogger(__name__)
    total = 0
    for name, child in model.named_children():
        n = count_parameters(child, trainable_only=False)
        total += n
        logger.info('{:<24s} {:>12,d} params'.format(name, n))
    logger.info('{:<24s} {:>12,d} params'.format('total', total))
    if isinstance(model, DistributedDataParallel):
        logger.info('Model is wrapped with DistributedDataParallel (one process per GPU).')


def makedirs(path):
    if not os.path.exists(path):
        os.makedirs(path, exist_ok=True)
