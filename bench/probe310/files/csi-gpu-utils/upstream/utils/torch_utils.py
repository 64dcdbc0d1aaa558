"""PyTorch helpers shared by the CSI-feedback / channel-estimation experiments.

`select_device`, `time_sync` and `ModelEMA` are adapted from the YOLOv5 utils
that half of the lab's repos copy around; `get_free_gpu` picks the GPU with the
most free memory on shared servers.
"""
import logging
import math
import os
import platform
import subprocess
import time
from contextlib import contextmanager
from copy import deepcopy

import torch
import torch.distributed as dist
import torch.nn as nn

LOGGER = logging.getLogger(__name__)
LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))
RANK = int(os.getenv("RANK", -1))
WORLD_SIZE = int(os.getenv("WORLD_SIZE", 1))


@contextmanager
def torch_distributed_zero_first(local_rank: int):
    """Make all processes wait for the local master to do something (e.g. cache the dataset)."""
    if local_rank not in [-1, 0]:
        dist.barrier(device_ids=[local_rank])
    yield
    if local_rank == 0:
        dist.barrier(device_ids=[0])


def get_free_gpu(min_free_mb=2000):
    """Return the index of the GPU with the most free memory according to nvidia-smi."""
    try:
        out = subprocess.check_output(
            ["nvidia-smi", "--query-gpu=memory.free", "--format=csv,nounits,noheader"],
            encoding="utf-8")
    except (OSError, subprocess.CalledProcessError):
        return None
    free = [int(x) for x in out.strip().split("\n") if x.strip()]
    if not free:
        return None
    best = max(range(len(free)), key=lambda i: free[i])
    if free[best] < min_free_mb:
        LOGGER.warning("all GPUs are busy (max free %d MB)", free[best])
    return best


def select_device(device="", batch_size=0, newline=True):
    """device = None or 'cpu' or 0 or '0' or '0,1,2,3' or 'auto'."""
    s = f"CSI-Torch Python-{platform.python_version()} torch-{torch.__version__} "
    device = str(device).strip().lower().replace("cuda:", "").replace("none", "")
    if device == "auto":
        best = get_free_gpu()
        device = "" if best is None else str(best)
    cpu = device == "cpu"
    mps = device == "mps"
    if cpu or mps:
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1"  # force torch.cuda.is_available() = False
    elif device:  # non-cpu device requested
        os.environ["CUDA_VISIBLE_DEVICES"] = device  # set environment variable - must be before assert is_available()
        assert torch.cuda.is_available() and torch.cuda.device_count() >= len(device.replace(",", "")), \
            f"Invalid CUDA '--device {device}' requested, use '--device cpu' or pass valid CUDA device(s)"

    if not cpu and not mps and torch.cuda.is_available():  # prefer GPU if available
        devices = device.split(",") if device else "0"  # range(torch.cuda.device_count())  # i.e. 0,1,6,7
        n = len(devices)  # device count
        if n > 1 and batch_size > 0:  # check batch_size is divisible by device_count
            assert batch_size % n == 0, f"batch-size {batch_size} not multiple of GPU count {n}"
        space = " " * (len(s) + 1)
        for i, d in enumerate(devices):
            p = torch.cuda.get_device_properties(i)
            s += f"{'' if i == 0 else space}CUDA:{d} ({p.name}, {p.total_memory / (1 << 20):.0f}MiB)\n"
        arg = "cuda:0"
    elif mps and getattr(torch, "has_mps", False) and torch.backends.mps.is_available():
        s += "MPS\n"
        arg = "mps"
    else:  # revert to CPU
        s += "CPU\n"
        arg = "cpu"

    if not newline:
        s = s.rstrip()
    LOGGER.info(s)
    return torch.device(arg)


def time_sync():
    """PyTorch-accurate time."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.time()


def profile_model(model, input_shape=(1, 2, 32, 32), n=100, device=None):
    """Average forward latency (ms) and peak memory (MB) of `model` on `device`."""
    device = device or next(model.parameters()).device
    x = torch.randn(input_shape, device=device)
    model.eval()
    with torch.no_grad():
        for _ in range(10):
            model(x)
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        t0 = time_sync()
        for _ in range(n):
            model(x)
        t1 = time_sync()
    mem = torch.cuda.max_memory_allocated(device) / 1e6 if device.type == "cuda" else 0.0
    return (t1 - t0) / n * 1e3, mem


def is_parallel(model):
    return type(model) in (nn.parallel.DataParallel, nn.parallel.DistributedDataParallel)


def de_parallel(model):
    return model.module if is_parallel(model) else model


def model_info(model, verbose=False):
    n_p = sum(x.numel() for x in model.parameters())
    n_g = sum(x.numel() for x in model.parameters() if x.requires_grad)
    if verbose:
        print(f"{'layer':>5} {'name':>40} {'gradient':>9} {'parameters':>12} {'shape':>20}")
        for i, (name, p) in enumerate(model.named_parameters()):
            print("%5g %40s %9s %12g %20s" % (i, name, p.requires_grad, p.numel(), list(p.shape)))
    LOGGER.info(f"Model summary: {len(list(model.modules()))} layers, {n_p} parameters, {n_g} gradients")


def init_seeds(seed=0, deterministic=False):
    import random
    import numpy as np
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)  # for Multi-GPU, exception safe
    if deterministic:
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.deterministic = True
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        os.environ["PYTHONHASHSEED"] = str(seed)


class ModelEMA:
    """Exponential moving average of model weights (keeps a float32 copy on the same device)."""

    def __init__(self, model, decay=0.9999, tau=2000, updates=0):
        self.ema = deepcopy(de_parallel(model)).eval()
        self.updates = updates
        self.decay = lambda x: decay * (1 - math.exp(-x / tau))
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def update(self, model):
        self.updates += 1
        d = self.decay(self.updates)
        msd = de_parallel(model).state_dict()
        for k, v in self.ema.state_dict().items():
            if v.dtype.is_floating_point:
                v *= d
                v += (1 - d) * msd[k].detach()


class EarlyStopping:
    """Stop training when the monitored metric (e.g. validation NMSE) stops improving."""

    def __init__(self, patience=30, mode="min"):
        self.best = float("inf") if mode == "min" else -float("inf")
        self.best_epoch = 0
        self.patience = patience or float("inf")
        self.mode = mode
        self.possible_stop = False

    def __call__(self, epoch, value):
        improved = value < self.best if self.mode == "min" else value > self.best
        if improved:
            self.best_epoch = epoch
            self.best = value
        delta = epoch - self.best_epoch
        self.possible_stop = delta >= (self.patience - 1)
        stop = delta >= self.patience
        if stop:
            LOGGER.info(f"Stopping training early as no improvement observed in last {self.patience} epochs. "
                        f"Best results observed at epoch {self.best_epoch}, best value {self.best:.4f}.")
        return stop


def intersect_dicts(da, db, exclude=()):
    """Dictionary intersection of matching keys and shapes, omitting 'exclude' keys, using da values."""
    return {k: v for k, v in da.items() if k in db and all(x not in k for x in exclude) and v.shape == db[k].shape}


def smart_optimizer(model, name="Adam", lr=0.001, momentum=0.9, decay=1e-5):
    """Three parameter groups: weights with decay, weights without decay (norm layers), biases."""
    g = [], [], []
    bn = tuple(v for k, v in nn.__dict__.items() if "Norm" in k)
    for v in model.modules():
        for p_name, p in v.named_parameters(recurse=False):
            if p_name == "bias":
                g[2].append(p)
            elif p_name == "weight" and isinstance(v, bn):
                g[1].append(p)
            else:
                g[0].append(p)
    if name == "Adam":
        optimizer = torch.optim.Adam(g[2], lr=lr, betas=(momentum, 0.999))
    elif name == "AdamW":
        optimizer = torch.optim.AdamW(g[2], lr=lr, betas=(momentum, 0.999), weight_decay=0.0)
    elif name == "SGD":
        optimizer = torch.optim.SGD(g[2], lr=lr, momentum=momentum, nesterov=True)
    else:
        raise NotImplementedError(f"Optimizer {name} not implemented.")
    optimizer.add_param_group({"params": g[0], "weight_decay": decay})
    optimizer.add_param_group({"params": g[1], "weight_decay": 0.0})
    LOGGER.info(f"optimizer: {type(optimizer).__name__}(lr={lr}) with parameter groups "
                f"{len(g[1])} weight(decay=0.0), {len(g[0])} weight(decay={decay}), {len(g[2])} bias")
    return optimizer
