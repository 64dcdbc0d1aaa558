from __future__ import annotations

import os
import random

import numpy as np
import torch


def fix_seed(seed: int = 42) -> None:
    """Seed python, numpy and torch (CPU + all GPUs) for reproducible folds."""
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.deterministic = True


def worker_init_fn(worker_id: int) -> None:
    """Give every DataLoader worker its own numpy/random stream."""
    seed = torch.initial_seed() % 2**32
    np.random.seed(seed + worker_id)
    random.seed(seed + worker_id)


def get_generator(seed: int | None) -> torch.Generator | None:
    if seed is None:
        return None
    g = torch.Generator()
    g.manual_seed(seed)
    return g
