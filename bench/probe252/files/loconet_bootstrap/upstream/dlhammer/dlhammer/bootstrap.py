#!/usr/bin/env python
# -*- coding: utf-8 -*-
"""dlhammer bootstrap: parse the command line, merge the yaml config into the
defaults, create the output folder, set up logging and seeds.

    cfg = bootstrap(print_cfg=True)
"""

import os
import sys
import random
import logging
import argparse
import datetime
import platform

import numpy as np
import torch
from yacs.config import CfgNode as CN

from .logger import bootstrap_logger, logger

# --------------------------------------------------------------------------------
# defaults
# --------------------------------------------------------------------------------
_C = CN(new_allowed=True)
_C.SEED = "0"
_C.NUM_GPUS = 1
_C.NUM_WORKERS = 4
_C.LOG_NAME = "log.txt"
_C.OUTPUT_DIR = "./output"
_C.DIST_BACKEND = "nccl"
_C.MASTER_ADDR = "localhost"
_C.MASTER_PORT = 29500
_C.DEVICE = "cuda"
_C.CUDNN_BENCHMARK = False

_C.MODEL = CN(new_allowed=True)
_C.MODEL.NUM_SPEAKERS = 3
_C.MODEL.FLASH_ATTN = False

_C.TRAIN = CN(new_allowed=True)
_C.TRAIN.AMP = False
_C.TRAIN.BATCH_SIZE = 1
_C.TRAIN.MAX_EPOCH = 25


def get_defaults():
    return _C.clone()


def define_default_arg_parser():
    parser = argparse.ArgumentParser(description="dlhammer")
    parser.add_argument("--cfg", dest="config_file", default="", metavar="FILE", help="path to config file", type=str)
    parser.add_argument("--local_rank", type=int, default=0, help="set by torch.distributed.launch")
    parser.add_argument("opts", help="Modify config options using the command-line", default=None, nargs=argparse.REMAINDER)
    return parser


def update_config(cfg, args):
    if args.config_file:
        cfg.merge_from_file(args.config_file)
    if args.opts:
        cfg.merge_from_list(args.opts)
    cfg.WORKSPACE = os.path.join(cfg.OUTPUT_DIR, datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    cfg.local_rank = args.local_rank
    return cfg


def set_random_seed(seed, deterministic=False):
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def collect_env_info():
    """Return a printable string describing the software / hardware stack."""
    lines = []
    lines.append("sys.platform: %s" % sys.platform)
    lines.append("Python: %s" % sys.version.replace("\n", ""))
    lines.append("PyTorch: %s" % torch.__version__)
    lines.append("PyTorch built with CUDA: %s, cuDNN: %s" % (torch.version.cuda, torch.backends.cudnn.version()))
    num_gpus = torch.cuda.device_count()
    lines.append("GPUs available: %d" % num_gpus)
    for k in range(num_gpus):
        lines.append("  GPU %d: %s" % (k, torch.cuda.get_device_name(k)))
    lines.append("CUDA_VISIBLE_DEVICES: %s" % os.environ.get("CUDA_VISIBLE_DEVICES", "<not set>"))
    lines.append("host: %s" % platform.node())
    return "\n".join(lines)


def get_rank():
    if not torch.distributed.is_available() or not torch.distributed.is_initialized():
        return 0
    return torch.distributed.get_rank()


def get_world_size():
    if not torch.distributed.is_available() or not torch.distributed.is_initialized():
        return 1
    return torch.distributed.get_world_size()


def is_main_process():
    return get_rank() == 0


def synchronize():
    """Barrier across all ranks; no-op for single-process runs."""
    if get_world_size() == 1:
        return
    torch.distributed.barrier()


def get_device(cfg, local_rank=0):
    """Device for single-process tools (test scripts, feature extraction)."""
    if cfg.DEVICE == "cpu":
        return torch.device("cpu")
    return torch.device(cfg.DEVICE, local_rank)


def bootstrap(print_cfg=True, parser=None):
    parser = parser or define_default_arg_parser()
    args = parser.parse_args()
    cfg = update_config(get_defaults(), args)

    os.makedirs(cfg.WORKSPACE, exist_ok=True)
    bootstrap_logger(os.path.join(cfg.WORKSPACE, cfg.LOG_NAME))

    set_random_seed(cfg.SEED)
    torch.backends.cudnn.benchmark = cfg.CUDNN_BENCHMARK

    if print_cfg:
        logger.info("Environment:\n%s" % collect_env_info())
        logger.info("Config:\n%s" % cfg.dump())

    with open(os.path.join(cfg.WORKSPACE, "config.yaml"), "w") as f:
        f.write(cfg.dump())
    return cfg
