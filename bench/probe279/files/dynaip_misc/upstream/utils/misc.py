"""
Small helpers shared by train.py / eval.py / live.py.
"""
import logging
import os
import random
import sys
import time

import numpy as np
import torch


class AverageMeter(object):
    """Computes and stores the average and current value."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0.
        self.avg = 0.
        self.sum = 0.
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / max(self.count, 1)


def get_logger(log_file=None, name='dynaip', level=logging.INFO):
    logger = logging.getLogger(name)
    if logger.handlers:
        return logger
    logger.setLevel(level)
    fmt = logging.Formatter('%(asctime)s %(levelname)s %(message)s', '%m-%d %H:%M:%S')
    sh = logging.StreamHandler(sys.stdout)
    sh.setFormatter(fmt)
    logger.addHandler(sh)
    if log_file is not None:
        os.makedirs(os.path.dirname(log_file) or '.', exist_ok=True)
        fh = logging.FileHandler(log_file)
        fh.setFormatter(fmt)
        logger.addHandler(fh)
    return logger


def set_random_seed(seed, deterministic=False):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        torch.use_deterministic_algorithms(True, warn_only=True)


def setup_device(gpu=0, kind='cuda'):
    """
    Select the compute device.

    :param gpu: device index (ignored for cpu); -1 forces CPU.
    :param kind: 'cuda' or 'cpu' (from cfg.device).
    """
    if kind == 'cpu' or gpu is None or gpu < 0:
        return torch.device('cpu')
    if kind == 'cuda':
        if not torch.cuda.is_available():
            logging.getLogger('dynaip').warning('CUDA requested but not available, using CPU')
            return torch.device('cpu')
        torch.cuda.set_device(gpu)
        return torch.device('cuda', gpu)
    raise ValueError('unknown device kind: %s' % kind)


def to_device(batch, device, non_blocking=False):
    """
    Move every tensor of a (nested) batch dict/list to `device`.
    """
    if torch.is_tensor(batch):
        return batch.to(device, non_blocking=non_blocking)
    if isinstance(batch, dict):
        return {k: to_device(v, device, non_blocking) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device, non_blocking) for v in batch)
    return batch


def count_frames(dataset):
    return sum(len(s) for s in getattr(dataset, 'sequences', []))


def describe_device(device):
    """
    One-line description of the device for the log header.
    """
    if device.type == 'cuda':
        props = torch.cuda.get_device_properties(device)
        return '%s (%.1f GB, sm_%d%d)' % (props.name, props.total_memory / 1024 ** 3, props.major, props.minor)
    return 'cpu (%d threads)' % torch.get_num_threads()


class Timer(object):
    """
    Wall-clock timer for code that launches GPU work; synchronises the device before reading the clock.

        with Timer('forward', device) as t:
            out = model(x)
        print(t.ms)
    """
    def __init__(self, name='', device=None, logger=None):
        self.name = name
        self.device = device
        self.logger = logger
        self.ms = 0.

    def _sync(self):
        if self.device is not None and self.device.type == 'cuda':
            torch.cuda.synchronize(self.device)

    def __enter__(self):
        self._sync()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self._sync()
        self.ms = (time.perf_counter() - self._t0) * 1000
        if self.logger is not None:
            self.logger.info('%s: %.2f ms' % (self.name, self.ms))
        return False


class CheckpointSaver(object):
    """
    Keeps the last `keep` checkpoints plus the best one (lower metric is better).
    """
    def __init__(self, work_dir, keep=3):
        self.work_dir = work_dir
        self.keep = keep
        self.history = []
        self.best = float('inf')
        os.makedirs(work_dir, exist_ok=True)

    def save(self, state, epoch, metric=None):
        path = os.path.join(self.work_dir, 'epoch_%03d.pth' % epoch)
        torch.save(state, path)
        self.history.append(path)
        while len(self.history) > self.keep:
            old = self.history.pop(0)
            if os.path.exists(old):
                os.remove(old)
        if metric is not None and metric < self.best:
            self.best = metric
            torch.save(state, os.path.join(self.work_dir, 'best.pth'))
            return True
        return False

    def latest(self):
        return self.history[-1] if self.history else None


def load_pretrained(model, path, strict=False, logger=None):
    """
    Load weights from a DynaIP checkpoint or a bare state_dict, skipping shape mismatches
    (e.g. when changing the number of IMUs).
    """
    ckpt = torch.load(path, map_location='cpu')
    state = ckpt.get('model', ckpt)
    own = model.state_dict()
    filtered = {k: v for k, v in state.items() if k in own and own[k].shape == v.shape}
    missing = [k for k in own if k not in filtered]
    model.load_state_dict(filtered, strict=strict)
    if logger is not None:
        logger.info('loaded %d/%d tensors from %s (%d missing)' % (len(filtered), len(own), path, len(missing)))
    return missing
