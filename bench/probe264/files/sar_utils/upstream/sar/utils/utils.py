import logging
import os
import random
import subprocess
import sys
import time

import numpy as np
import torch


def get_logger(name, output_directory, log_name, debug):
    logger = logging.getLogger(name)

    formatter = logging.Formatter(
        "%(asctime)s %(name)s %(levelname)s: %(message)s", datefmt="%Y-%m-%d %H:%M:%S"
    )

    console_handler = logging.StreamHandler(sys.stdout)
    console_handler.setFormatter(formatter)
    logger.addHandler(console_handler)

    if output_directory is not None:
        file_handler = logging.FileHandler(os.path.join(output_directory, log_name))
        file_handler.setFormatter(formatter)
        logger.addHandler(file_handler)

    if debug:
        logger.setLevel(logging.DEBUG)
    else:
        logger.setLevel(logging.INFO)

    logger.propagate = False
    return logger


def set_random_seed(seed, deterministic=False):
    """Seed python, numpy and torch (CPU + all GPUs)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def describe_env(logger):
    """Log the software / hardware environment at the top of every run."""
    logger.info(f"python {sys.version.split()[0]}, torch {torch.__version__}, "
                f"cuda {torch.version.cuda}, cudnn {torch.backends.cudnn.version()}")
    if not torch.cuda.is_available():
        logger.warning("CUDA is not available, running on CPU will be extremely slow")
        return
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        logger.info(f"GPU {i}: {props.name}, {props.total_memory / 1024 ** 3:.1f} GB, "
                    f"sm_{props.major}{props.minor}, {props.multi_processor_count} SMs")
    try:
        commit = subprocess.check_output(["git", "rev-parse", "--short", "HEAD"]).decode().strip()
        logger.info(f"git commit {commit}")
    except Exception:
        pass


class Timer(object):
    """Wall-clock timer for the adaptation loop; synchronizes the GPU so that
    the asynchronous kernel launches are included in the measured time."""

    def __init__(self, sync=True):
        self.sync = sync
        self.total = 0.0
        self.count = 0
        self._start = None

    def __enter__(self):
        if self.sync:
            torch.cuda.synchronize()
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if self.sync:
            torch.cuda.synchronize()  # wait for queued kernels before stopping the clock
        self.total += time.perf_counter() - self._start
        self.count += 1
        return False

    @property
    def avg(self):
        return self.total / max(self.count, 1)


def gpu_mem_mb():
    """Peak allocated GPU memory (MB) since the last reset."""
    return torch.cuda.max_memory_allocated() / 1024 ** 2


def reset_gpu_mem():
    torch.cuda.reset_peak_memory_stats()


def save_results(path, acc1s, acc5s, args):
    """Write per-corruption accuracies in the same order as args.corruptions."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a") as f:
        f.write(f"# {args.method} {args.model} level{args.level} seed{args.seed} bs{args.test_batch_size}\n")
        f.write(",".join(f"{a:.2f}" for a in acc1s) + f",mean={np.mean(acc1s):.2f}\n")
        f.write(",".join(f"{a:.2f}" for a in acc5s) + f",mean={np.mean(acc5s):.2f}\n")
