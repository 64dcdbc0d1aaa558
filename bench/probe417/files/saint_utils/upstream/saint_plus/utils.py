import logging
import os
import random
import subprocess
import time

import numpy as np
import torch

logger = logging.getLogger("saint_plus")


def seed_everything(seed=42):
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0.0
        self.sum = 0.0
        self.count = 0
        self.avg = 0.0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / max(self.count, 1)


class Timer:
    """Wall-clock timer that waits for queued GPU work before reading the clock."""

    def __init__(self, sync=True):
        self.sync = sync
        self.t0 = None

    def _sync(self):
        if self.sync and torch.cuda.is_available():
            torch.cuda.synchronize()

    def __enter__(self):
        self._sync()
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self._sync()
        self.elapsed = time.perf_counter() - self.t0


def gpu_info():
    """One line per visible card, for the run log."""
    try:
        out = subprocess.check_output(
            ["nvidia-smi", "--query-gpu=index,name,memory.used,memory.total,utilization.gpu",
             "--format=csv,noheader,nounits"],
            encoding="utf-8",
        )
        return [line.strip() for line in out.strip().splitlines()]
    except (FileNotFoundError, subprocess.CalledProcessError):
        return []


def log_device(rank=0):
    if not torch.cuda.is_available():
        logger.info("running on CPU")
        return
    idx = torch.cuda.current_device()
    name = torch.cuda.get_device_name(idx)
    total = torch.cuda.get_device_properties(idx).total_memory / 1024 ** 3
    logger.info(f"[rank {rank}] device {idx}: {name}, {total:.1f} GiB")
    for line in gpu_info():
        logger.info(f"  nvidia-smi: {line}")


def memory_report(tag=""):
    alloc = torch.cuda.memory_allocated() / 1024 ** 2
    peak = torch.cuda.max_memory_allocated() / 1024 ** 2
    reserved = torch.cuda.memory_reserved() / 1024 ** 2
    logger.info(f"{tag} mem alloc {alloc:.0f}MB peak {peak:.0f}MB reserved {reserved:.0f}MB")
    torch.cuda.reset_peak_memory_stats()


def save_checkpoint(path, model, optimizer, scaler, epoch, best_auc):
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scaler": scaler.state_dict() if scaler is not None else None,
        "epoch": epoch,
        "best_auc": best_auc,
    }
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)
