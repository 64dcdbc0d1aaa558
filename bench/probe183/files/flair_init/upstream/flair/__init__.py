import logging.config
import os
from pathlib import Path

import torch
from transformers import set_seed as hf_set_seed

# global variable: cache_root
from .file_utils import set_proxies

cache_root = Path(os.getenv("FLAIR_CACHE_ROOT", Path(Path.home(), ".flair")))

device: torch.device
"""Flair is using a single device for everything. You can set this device by overwriting this variable.

Examples:
    >>> import flair
    >>> flair.device = torch.device("cuda:1")  # use the second GPU
    >>> flair.device = torch.device("cpu")  # force CPU

The default is the first CUDA device if one is available, otherwise the CPU.
Set the environment variable ``FLAIR_DEVICE`` to override it without code changes.
"""
# global variable: device
if os.getenv("FLAIR_DEVICE"):
    device = torch.device(os.getenv("FLAIR_DEVICE"))
elif torch.cuda.is_available():
    device = torch.device("cuda:0")
else:
    device = torch.device("cpu")

# global variable: version
__version__ = "0.13.1"
"""The current version of the flair library installed."""

# global variable: arrow symbol
_arrow = " → "

from . import (  # noqa: E402 import after setting device
    data,
    models,
    nn,
    trainers,
    visual,
)

logging.config.dictConfig(
    {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"standard": {"format": "%(asctime)-15s %(message)s"}},
        "handlers": {
            "console": {
                "level": "INFO",
                "class": "logging.StreamHandler",
                "formatter": "standard",
                "stream": "ext://sys.stdout",
            }
        },
        "loggers": {"flair": {"handlers": ["console"], "level": "INFO", "propagate": False}},
    }
)

logger = logging.getLogger("flair")


def set_seed(seed: int):
    """Set the seed for all random generators used in training.

    Use this method to guarantee reproducibility of experiments.

    Args:
        seed: any value you want
    """
    hf_set_seed(seed)


def get_device_name() -> str:
    """Name of the accelerator flair runs on, used in the training log header."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return str(device)


__all__ = [
    "cache_root",
    "device",
    "__version__",
    "logger",
    "set_seed",
    "get_device_name",
    "data",
    "models",
    "nn",
    "trainers",
    "visual",
    "set_proxies",
]
