import logging
import os
import random
import subprocess
import sys

import numpy as np
import torch


class AverageMeter(object):
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
        self.avg = self.sum / max(1, self.count)


def get_logger(log_dir, is_main=True, name="fcg"):
    logger = logging.getLogger(name)
    logger.setLevel(logging.INFO if is_main else logging.WARNING)
    logger.handlers.clear()
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S")
    sh = logging.StreamHandler(sys.stdout)
    sh.setFormatter(fmt)
    logger.addHandler(sh)
    if is_main:
        os.makedirs(log_dir, exist_ok=True)
        fh = logging.FileHandler(os.path.join(log_dir, "train.log"))
        fh.setFormatter(fmt)
        logger.addHandler(fh)
    return logger


def set_seed(seed, deterministic=False):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        torch.use_deterministic_algorithms(True, warn_only=True)
        # required by cuBLAS for deterministic GEMMs
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"


def get_device(local_rank=0):
    return torch.device(f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu")


def num_visible_gpus():
    return torch.cuda.device_count()


def gpu_mem_report():
    """One-line summary of memory use on all visible GPUs, for the epoch log."""
    try:
        out = subprocess.check_output(
            ["nvidia-smi", "--query-gpu=index,memory.used,memory.total,utilization.gpu",
             "--format=csv,noheader,nounits"], stderr=subprocess.DEVNULL, timeout=10).decode()
    except (OSError, subprocess.SubprocessError):
        return "gpu: n/a"
    parts = []
    for line in out.strip().splitlines():
        idx, used, total, util = [x.strip() for x in line.split(",")]
        parts.append(f"gpu{idx} {int(used) / 1024:.1f}/{int(total) / 1024:.0f}G {util}%")
    return " | ".join(parts)


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def save_json(obj, path):
    import json
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as fh:
        json.dump(obj, fh, indent=2, sort_keys=True)


def env_summary():
    lines = [f"python {sys.version.split()[0]}", f"torch {torch.__version__}"]
    if torch.cuda.is_available():
        lines.append(f"cuda {torch.version.cuda} cudnn {torch.backends.cudnn.version()}")
        for i in range(torch.cuda.device_count()):
            lines.append(f"  [{i}] {torch.cuda.get_device_name(i)}")
    else:
        lines.append("cuda: not available")
    return "\n".join(lines)
