import math
import os
import random
import time
from types import SimpleNamespace

import numpy as np
import torch
from torch.optim.lr_scheduler import CosineAnnealingLR, LambdaLR, OneCycleLR


def seed_everything(seed=42):
    random.seed(seed)
    os.environ['PYTHONHASHSEED'] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.deterministic = True


def to_namespace(d):
    """Recursively converts a (yaml) dict into attribute-accessible namespaces."""
    if isinstance(d, dict):
        return SimpleNamespace(**{k: to_namespace(v) for k, v in d.items()})
    if isinstance(d, list):
        return [to_namespace(v) for v in d]
    return d


class AverageMeter:
    """Computes and stores the average and current value"""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class Logger:
    def __init__(self, path):
        self.path = path
        self.t0 = time.time()

    def write(self, msg):
        line = f'[{time.time() - self.t0:8.0f}s] {msg}'
        print(line, flush=True)
        with open(self.path, 'a') as f:
            f.write(line + '\n')


def gpu_memory_usage(device_index=0):
    """(used, total) memory of one GPU in MiB, via NVML (independent of the torch caching allocator)."""
    import pynvml
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
    info = pynvml.nvmlDeviceGetMemoryInfo(handle)
    return info.used / 1024 ** 2, info.total / 1024 ** 2


def rand_bbox(size, lam):
    W = size[2]
    H = size[3]
    cut_rat = np.sqrt(1. - lam)
    cut_w = int(W * cut_rat)
    cut_h = int(H * cut_rat)

    # uniform
    cx = np.random.randint(W)
    cy = np.random.randint(H)

    bbx1 = np.clip(cx - cut_w // 2, 0, W)
    bby1 = np.clip(cy - cut_h // 2, 0, H)
    bbx2 = np.clip(cx + cut_w // 2, 0, W)
    bby2 = np.clip(cy + cut_h // 2, 0, H)
    return bbx1, bby1, bbx2, bby2


def cutmix(data, target, alpha):
    indices = torch.randperm(data.size(0)).cuda()
    shuffled_target = target[indices]

    lam = np.clip(np.random.beta(alpha, alpha), 0.3, 0.4)
    bbx1, bby1, bbx2, bby2 = rand_bbox(data.size(), lam)
    new_data = data.clone()
    new_data[:, :, bby1:bby2, bbx1:bbx2] = data[indices, :, bby1:bby2, bbx1:bbx2]
    # adjust lambda to exactly match pixel ratio
    lam = 1 - ((bbx2 - bbx1) * (bby2 - bby1) / (data.size()[-1] * data.size()[-2]))
    return new_data, target, shuffled_target, lam


def get_scheduler(cfg, optimizer, steps_per_epoch):
    name = cfg.train.scheduler
    if name == 'cosine':
        return CosineAnnealingLR(optimizer, T_max=cfg.train.epochs, eta_min=1e-6)
    if name == 'onecycle':
        return OneCycleLR(optimizer, max_lr=cfg.train.lr, epochs=cfg.train.epochs,
                          steps_per_epoch=steps_per_epoch // cfg.train.accum_steps, pct_start=0.1)
    if name == 'cosine_warmup':
        total = cfg.train.epochs * steps_per_epoch // cfg.train.accum_steps
        warmup = cfg.train.warmup_epochs * steps_per_epoch // cfg.train.accum_steps

        def lr_lambda(step):
            if step < warmup:
                return float(step) / float(max(1, warmup))
            progress = float(step - warmup) / float(max(1, total - warmup))
            return max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))

        return LambdaLR(optimizer, lr_lambda)
    return None
