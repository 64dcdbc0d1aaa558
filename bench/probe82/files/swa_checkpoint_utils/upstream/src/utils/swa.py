"""Stochastic weight averaging helpers used across our competition pipelines.

Two flavours:
  * ``average_checkpoints``: offline SWA - average the best-k / last-k epoch checkpoints of a fold
    and recalibrate BatchNorm statistics on (a subset of) the training data;
  * ``SWAWrapper``: online SWA on top of torch.optim.swa_utils.AveragedModel.

BatchNorm recalibration runs in fp32 without autocast (running stats are sensitive to fp16).
"""
import glob
import logging
import os
import re
from collections import OrderedDict

import torch
import torch.nn as nn
from torch.optim.swa_utils import AveragedModel, update_bn

logger = logging.getLogger(__name__)


def _epoch_of(path):
    m = re.search(r"epoch(\d+)", os.path.basename(path))
    return int(m.group(1)) if m else -1


def _score_of(path):
    m = re.search(r"score([0-9.]+)\.pth", os.path.basename(path))
    return float(m.group(1)) if m else float("-inf")


def select_checkpoints(ckpt_dir, k=5, mode="best", pattern="*.pth"):
    paths = [p for p in glob.glob(os.path.join(ckpt_dir, pattern)) if "swa" not in p]
    if mode == "best":
        paths = sorted(paths, key=_score_of, reverse=True)[:k]
    elif mode == "last":
        paths = sorted(paths, key=_epoch_of)[-k:]
    else:
        raise ValueError(mode)
    logger.info("SWA over %d checkpoints: %s", len(paths), [os.path.basename(p) for p in paths])
    return paths


def _strip(state_dict):
    out = OrderedDict()
    for k, v in state_dict.items():
        if k.startswith("module."):
            k = k[7:]
        out[k] = v
    return out


def average_checkpoints(paths, device="cuda"):
    """Uniform average of the float tensors in several state dicts (ints are taken from the last one)."""
    avg, n = None, 0
    for path in paths:
        ckpt = torch.load(path, map_location=device)
        state = _strip(ckpt.get("state_dict", ckpt) if isinstance(ckpt, dict) else ckpt)
        if avg is None:
            avg = OrderedDict((k, v.clone().double() if v.is_floating_point() else v.clone())
                              for k, v in state.items())
        else:
            for k, v in state.items():
                if v.is_floating_point():
                    avg[k] += v.double()
                else:
                    avg[k] = v.clone()
        n += 1
    for k, v in avg.items():
        if v.is_floating_point():
            avg[k] = (v / n).float()
    return avg


def _reset_bn(model):
    momenta = {}
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
            module.momentum = None
    return momenta


@torch.no_grad()
def bn_update(loader, model, max_batches=200):
    """Recompute BN running statistics (cumulative average) with the averaged weights."""
    momenta = _reset_bn(model)
    if not momenta:
        return
    was_training = model.training
    model.train()
    for i, batch in enumerate(loader):
        if i >= max_batches:
            break
        input = batch[0] if isinstance(batch, (list, tuple)) else batch
        input = input.cuda(non_blocking=True)
        model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


def swa_fold(model, ckpt_dir, loader, out_path, k=5, mode="best"):
    paths = select_checkpoints(ckpt_dir, k=k, mode=mode)
    state = average_checkpoints(paths)
    model.load_state_dict(state)
    bn_update(loader, model)
    torch.save(model.state_dict(), out_path)
    return model


class SWAWrapper:
    """Online SWA: keep an AveragedModel alongside the trained one, average every ``freq`` steps."""

    def __init__(self, model, start_step, freq=100, use_buffers=False):
        self.swa_model = AveragedModel(model, use_buffers=use_buffers)
        self.start_step = start_step
        self.freq = freq
        self.n_updates = 0

    def step(self, model, global_step):
        if global_step >= self.start_step and global_step % self.freq == 0:
            self.swa_model.update_parameters(model)
            self.n_updates += 1

    def finalize(self, loader):
        if self.n_updates == 0:
            logger.warning("SWA never updated; returning the plain model")
            return self.swa_model.module
        device = next(self.swa_model.parameters()).device
        update_bn(loader, self.swa_model, device=device)
        return self.swa_model.module
