"""Exponential moving average of model weights.

Adapted from the YOLOv5 / timm ``ModelEmaV2`` implementations that most of our competition
pipelines share. Keeping the EMA copy on the same device as the model (the default) is fastest;
pass ``device="cpu"`` to save accelerator memory on large backbones at the cost of a host copy
per update. Works with plain modules, DataParallel and DistributedDataParallel.
"""
import math
from copy import deepcopy

import torch
import torch.nn as nn


def is_parallel(model):
    # True if model is wrapped by DP or DDP
    return type(model) in (nn.parallel.DataParallel, nn.parallel.DistributedDataParallel)


def de_parallel(model):
    return model.module if is_parallel(model) else model


class ModelEMA:
    """Model Exponential Moving Average with a warm-up ramp on the decay.

    decay_t = decay * (1 - exp(-updates / tau)), so early updates follow the model closely.
    """

    def __init__(self, model, decay=0.9999, tau=2000, updates=0, device=None, foreach=True):
        self.ema = deepcopy(de_parallel(model)).eval()
        self.updates = updates
        self.decay_fn = lambda x: decay * (1 - math.exp(-x / tau))
        self.device = device
        self.foreach = foreach
        if device is not None:
            self.ema.to(device=device)
        for p in self.ema.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        self.updates += 1
        d = self.decay_fn(self.updates)
        msd = de_parallel(model).state_dict()
        ema_fp, model_fp, ema_int, model_int = [], [], [], []
        for k, v in self.ema.state_dict().items():
            mv = msd[k].detach()
            if self.device is not None:
                mv = mv.to(device=self.device, non_blocking=True)
            if v.dtype.is_floating_point:
                ema_fp.append(v)
                model_fp.append(mv)
            else:
                ema_int.append(v)
                model_int.append(mv)
        if self.foreach and ema_fp:
            torch._foreach_lerp_(ema_fp, model_fp, 1.0 - d)
        else:
            for e, m in zip(ema_fp, model_fp):
                e.mul_(d).add_(m, alpha=1.0 - d)
        for e, m in zip(ema_int, model_int):
            e.copy_(m)

    def update_attr(self, model, include=(), exclude=("process_group", "reducer")):
        for k, v in model.__dict__.items():
            if (len(include) and k not in include) or k.startswith("_") or k in exclude:
                continue
            setattr(self.ema, k, v)

    def state_dict(self):
        return {"ema": self.ema.state_dict(), "updates": self.updates}

    def load_state_dict(self, state):
        self.ema.load_state_dict(state["ema"])
        self.updates = state.get("updates", 0)

    @property
    def module(self):
        return self.ema


class EMAWarmupSchedule:
    """Switch EMA on only after ``start_epoch`` (the first epochs are too noisy to average)."""

    def __init__(self, start_epoch=1):
        self.start_epoch = start_epoch

    def active(self, epoch):
        return epoch >= self.start_epoch


def swap_to_ema(model, ema):
    """Copy the EMA weights into ``model`` in place (for validation / export), return the originals."""
    backup = deepcopy(de_parallel(model).state_dict())
    de_parallel(model).load_state_dict(ema.ema.state_dict(), strict=True)
    return backup


def restore_from_backup(model, backup):
    de_parallel(model).load_state_dict(backup, strict=True)


if __name__ == "__main__":
    # smoke test on whatever accelerator is present, falls back to CPU
    dev = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    net = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU()).to(dev)
    ema = ModelEMA(net, decay=0.99)
    for _ in range(3):
        net(torch.randn(2, 3, 16, 16, device=dev)).mean().backward()
        ema.update(net)
    print("ok", ema.updates)
