# Copyright (c) Facebook, Inc. and its affiliates. All Rights Reserved.
import errno
import json
import logging
import os
import random
import subprocess

import numpy as np
import torch

from .comm import is_main_process


def mkdir(path):
    try:
        os.makedirs(path)
    except OSError as e:
        if e.errno != errno.EEXIST:
            raise


def save_labels(dataset_list, output_dir):
    if is_main_process():
        logger = logging.getLogger(__name__)

        ids_to_labels = {}
        for dataset in dataset_list:
            if hasattr(dataset, 'categories'):
                ids_to_labels.update(dataset.categories)
            else:
                logger.warning("Dataset [{}] has no categories attribute, labels.json file won't be created".format(
                    dataset.__class__.__name__))

        if ids_to_labels:
            labels_file = os.path.join(output_dir, 'labels.json')
            logger.info("Saving labels mapping into {}".format(labels_file))
            with open(labels_file, 'w') as f:
                json.dump(ids_to_labels, f, indent=2)


def save_config(cfg, path):
    if is_main_process():
        with open(path, 'w') as f:
            f.write(cfg.dump())


def set_seed(seed, deterministic=False):
    """Seed python, numpy and torch RNGs (used by the relation trainer)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    if deterministic:
        # slower, but makes SGCls / PredCls runs bit-reproducible on one GPU
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def get_device(cfg=None):
    """Resolve the device to run on.

    ``MODEL.DEVICE cpu`` on the command line forces CPU (handy for debugging the
    relation head on a laptop); otherwise use the GPU whenever one is present.
    """
    if cfg is not None and cfg.MODEL.DEVICE == "cpu":
        return torch.device("cpu")
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def get_gpu_memory_map():
    """Return {gpu_id: used MiB} as reported by nvidia-smi (best effort)."""
    try:
        result = subprocess.check_output(
            [
                "nvidia-smi",
                "--query-gpu=memory.used",
                "--format=csv,nounits,noheader",
            ],
            encoding="utf-8",
        )
    except (OSError, subprocess.CalledProcessError):
        return {}
    gpu_memory = [int(x) for x in result.strip().split("\n")]
    return dict(zip(range(len(gpu_memory)), gpu_memory))


def memory_summary_mb(device=None):
    """Allocated / reserved / peak memory of the current process in MiB."""
    if device is None:
        device = torch.cuda.current_device()
    mb = 1024.0 * 1024.0
    return {
        "allocated": torch.cuda.memory_allocated(device) / mb,
        "reserved": torch.cuda.memory_reserved(device) / mb,
        "peak": torch.cuda.max_memory_allocated(device) / mb,
    }


def detach_to_cpu(obj):
    """Recursively move tensors in (nested) lists/dicts to the CPU."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: detach_to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(detach_to_cpu(v) for v in obj)
    return obj


def count_parameters(model, trainable_only=True):
    params = model.parameters()
    if trainable_only:
        params = (p for p in params if p.requires_grad)
    return sum(p.numel() for p in params)


def gpu_count_from_env():
    """Number of GPUs the job was given (CUDA_VISIBLE_DEVICES), not the ones it can see."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None or visible.strip() == "":
        return torch.cuda.device_count()
    return len([d for d in visible.split(",") if d.strip() != ""])
