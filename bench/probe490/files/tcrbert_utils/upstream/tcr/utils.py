"""
Misc. utility functions
"""

import os
import sys
import logging
import json
import gzip
import tempfile
import subprocess
import shlex
import collections
import itertools
from typing import *

import numpy as np
import pandas as pd

import torch

import featurization as ft

SRC_DIR = os.path.dirname(os.path.abspath(__file__))
assert os.path.isdir(SRC_DIR)
MODEL_DIR = os.path.join(os.path.dirname(SRC_DIR), "models")


def min_power_greater_than(
    value: SupportsFloat, base: SupportsFloat = 2
) -> SupportsFloat:
    """
    Return the lowest power of the base that exceeds the given value
    >>> min_power_greater_than(3, 4)
    4.0
    >>> min_power_greater_than(48, 2)
    64.0
    """
    p = np.ceil(np.log(value) / np.log(base))
    return np.power(base, p)


def is_json_file(fname: str) -> bool:
    """
    Return whether the given file is a json
    """
    try:
        with open(fname) as source:
            json.load(source)
        return True
    except json.decoder.JSONDecodeError:
        return False


def read_newline_file(fname: str, comment_char: str = "#") -> List[str]:
    """
    Read the newline delimited file, ignoring lines starting with
    comment_char
    """
    with open(fname) as source:
        retval = [line.strip() for line in source if line[0] != comment_char]
    return retval


def dedup(x: Iterable[Any]) -> List[Any]:
    """
    Dedup the given iterable, preserving order of occurrence
    >>> dedup([1, 2, 0, 1, 3, 2])
    [1, 2, 0, 3]
    >>> dedup(dedup([1, 2, 0, 1, 3, 2]))
    [1, 2, 0, 3]
    """
    # https://stackoverflow.com/questions/480214/how-do-you-remove-duplicates-from-a-list-whilst-preserving-order
    # Python 3.7 and above guarantee that dict is insertion ordered
    # sets do NOT do this, so list(set(x)) will lose order information
    return list(dict.fromkeys(x))


def get_device(i: Optional[int] = None) -> torch.device:
    """
    Returns the i-th GPU if GPU is available, else CPU
    A negative value or a float will default to CPU
    """
    if torch.cuda.is_available() and i is not None and isinstance(i, int) and i >= 0:
        devices = list(range(torch.cuda.device_count()))
        device_idx = devices[i]
        torch.cuda.set_device(device_idx)
        d = torch.device(f"cuda:{device_idx}")
        torch.cuda.set_device(d)
    else:
        logging.warn("Defaulting to CPU")
        d = torch.device("cpu")
    return d


def get_free_gpu() -> int:
    """
    Return the index of the GPU with the most free memory, as reported by nvidia-smi.
    Used by the bin/ scripts when --gpu -1 ("pick one for me") is given.
    """
    cmd = "nvidia-smi --query-gpu=memory.free --format=csv,nounits,noheader"
    try:
        out = subprocess.check_output(shlex.split(cmd)).decode().strip()
    except (FileNotFoundError, subprocess.CalledProcessError):
        logging.warning("nvidia-smi not available, falling back to GPU 0")
        return 0
    free = [int(x) for x in out.splitlines() if x.strip()]
    best = int(np.argmax(free))
    logging.info(f"Selected GPU {best} with {free[best]} MiB free")
    return best


def is_all_unique(x: Collection[Any]) -> bool:
    """
    Return whether the given iterable is all unique
    >>> is_all_unique(['x', 'y'])
    True
    >>> is_all_unique(['x', 'x', 'y'])
    False
    """
    return len(set(x)) == len(x)


def pad_or_trunc_sequence(seq: List[Any], l: int, right_align: bool = False, pad=None) -> List[Any]:
    """
    Pad the given sequence to the given length
    >>> pad_or_trunc_sequence(list("auggug"), 8)
    ['a', 'u', 'g', 'g', 'u', 'g', None, None]
    >>> pad_or_trunc_sequence(list("auggug"), 8, right_align=True)
    [None, None, 'a', 'u', 'g', 'g', 'u', 'g']
    >>> pad_or_trunc_sequence(list("augg"), 3)
    ['a', 'u', 'g']
    """
    delta = l - len(seq)
    if delta < 0:
        if right_align:
            return seq[-l:]
        return seq[:l]
    elif delta > 0:
        if right_align:
            return [pad] * delta + seq
        return seq + [pad] * delta
    return seq


def insert_whitespace(seq: str) -> str:
    """
    Return the sequence of characters with whitespace after each char
    >>> insert_whitespace("RKDCY")
    'R K D C Y'
    """
    return " ".join(list(seq))


def remove_whitespace(seq: str) -> str:
    """
    Remove whitespace from the given sequence
    >>> remove_whitespace("R K D C Y")
    'RKDCY'
    >>> remove_whitespace("R K D  C Y")
    'RKDCY'
    >>> remove_whitespace("R K D   C Y")
    'RKDCY'
    """
    return "".join(seq.split())


def ensure_dir(dirname: str) -> str:
    """Create the directory if it does not exist and return it"""
    if not os.path.isdir(dirname):
        os.makedirs(dirname)
    return dirname


def seed_everything(seed: int = 6489) -> None:
    """Seed python, numpy and torch (all GPUs) RNGs"""
    import random

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def split_train_valid_test(
    data: Sequence[Any],
    validation: float = 0.1,
    test: float = 0.1,
    rng_seed: int = 6489,
) -> Tuple[List[int], List[int], List[int]]:
    """
    Split the given data into train/valid/test indices
    """
    num_items = len(data)
    indices = np.arange(num_items)
    rng = np.random.default_rng(rng_seed)
    rng.shuffle(indices)

    num_test = int(np.round(num_items * test))
    num_valid = int(np.round(num_items * validation))
    test_idx = indices[:num_test]
    valid_idx = indices[num_test : num_test + num_valid]
    train_idx = indices[num_test + num_valid :]
    return list(train_idx), list(valid_idx), list(test_idx)


def main():
    """On the fly testing"""
    import doctest

    doctest.testmod()


if __name__ == "__main__":
    main()
