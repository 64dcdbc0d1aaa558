"""Small helpers shared by every training / inference script of the solution."""
import logging
import os
import platform
import random
import subprocess
import sys
import time
from contextlib import contextmanager

import numpy as np
import torch


def seed_everything(seed=42, deterministic=False):
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    if deterministic:
        # required by torch.use_deterministic_algorithms for cuBLAS >= 10.2
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    else:
        torch.backends.cudnn.benchmark = True


def worker_init_fn(worker_id):
    seed = torch.initial_seed() % 2 ** 32
    np.random.seed(seed + worker_id)
    random.seed(seed + worker_id)


def get_device(index=None):
    """Best available device; ``index`` selects a specific GPU."""
    if torch.cuda.is_available():
        return torch.device("cuda" if index is None else f"cuda:{index}")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def get_logger(filename=None, name="train", level=logging.INFO):
    logger = logging.getLogger(name)
    if logger.handlers:
        return logger
    logger.setLevel(level)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%m-%d %H:%M:%S")
    sh = logging.StreamHandler(sys.stdout)
    sh.setFormatter(fmt)
    logger.addHandler(sh)
    if filename:
        fh = logging.FileHandler(filename)
        fh.setFormatter(fmt)
        logger.addHandler(fh)
    return logger


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


@contextmanager
def timer(name, logger=None):
    t0 = time.time()
    yield
    torch.cuda.synchronize() if torch.cuda.is_available() else None
    msg = f"[{name}] done in {time.time() - t0:.1f} s"
    if logger is not None:
        logger.info(msg)
    else:
        print(msg)


def get_gpu_memory_map():
    """Used memory (MiB) per GPU as reported by nvidia-smi (includes other processes)."""
    result = subprocess.check_output(
        ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,nounits,noheader"], encoding="utf-8"
    )
    used = [int(x) for x in result.strip().split("\n")]
    return dict(zip(range(len(used)), used))


def log_env(logger):
    logger.info(f"python {platform.python_version()} | torch {torch.__version__} | "
                f"cuda {torch.version.cuda} | cudnn {torch.backends.cudnn.version()}")
    names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    logger.info(f"  gpus: {names}")
    if names:
        logger.info(f"  memory used (MiB): {get_gpu_memory_map()}")


def count_parameters(model, trainable_only=True):
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)


def to_numpy(t):
    if isinstance(t, torch.Tensor):
        return t.detach().float().cpu().numpy()
    return np.asarray(t)


def move_to(batch, device, non_blocking=True):
    """Recursively move tensors in (nested) lists / tuples / dicts to ``device``."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=non_blocking)
    if isinstance(batch, dict):
        return {k: move_to(v, device, non_blocking) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(move_to(v, device, non_blocking) for v in batch)
    return batch


class EarlyStopping:
    """Stop when the monitored score has not improved for ``patience`` epochs."""

    def __init__(self, patience=5, mode="max", delta=0.0):
        self.patience = patience
        self.mode = mode
        self.delta = delta
        self.best = None
        self.counter = 0

    def step(self, score):
        improved = (self.best is None or
                    (self.mode == "max" and score > self.best + self.delta) or
                    (self.mode == "min" and score < self.best - self.delta))
        if improved:
            self.best = score
            self.counter = 0
        else:
            self.counter += 1
        return self.counter >= self.patience, improved


def warmup_cosine_lambda(warmup_steps, total_steps, min_ratio=0.01):
    """LambdaLR factor: linear warm-up then cosine decay to ``min_ratio``."""
    import math

    def fn(step):
        if step < warmup_steps:
            return (step + 1) / max(1, warmup_steps)
        progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))

    return fn


def save_checkpoint(state, path):
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)


def load_checkpoint(path, model, optimizer=None, map_location="cpu", strict=True):
    ckpt = torch.load(path, map_location=map_location)
    state = ckpt.get("model", ckpt.get("state_dict", ckpt))
    state = {k[7:] if k.startswith("module.") else k: v for k, v in state.items()}
    missing, unexpected = model.load_state_dict(state, strict=strict)
    if optimizer is not None and "optimizer" in ckpt:
        optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt.get("epoch", -1), missing, unexpected
