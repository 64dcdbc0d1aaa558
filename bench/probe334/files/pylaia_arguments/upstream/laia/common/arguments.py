from __future__ import absolute_import

import argparse
import json
import os
from ast import literal_eval
from collections import OrderedDict

import torch

from laia.common.arguments_types import (
    NumberInClosedRange,
    NumberInOpenRange,
    str2bool,
    str2loglevel,
)
from laia.common.logging import config as log_config

_parser = None
_default_args = {
    "batch_size": (
        ("--batch_size",),
        {"type": NumberInClosedRange(int, vmin=1), "default": 8, "help": "Batch size"},
    ),
    "learning_rate": (
        ("--learning_rate",),
        {
            "type": NumberInOpenRange(float, vmin=0),
            "default": 0.0005,
            "help": "Learning rate",
        },
    ),
    "momentum": (
        ("--momentum",),
        {
            "type": NumberInClosedRange(float, vmin=0),
            "default": 0,
            "help": "Momentum (only used by SGD and RMSProp)",
        },
    ),
    "weight_l2_penalty": (
        ("--weight_l2_penalty",),
        {
            "default": 0.0,
            "type": NumberInClosedRange(float, vmin=0),
            "help": "Apply this L2 weight penalty to the loss function",
        },
    ),
    "nesterov": (
        ("--nesterov",),
        {
            "type": str2bool,
            "nargs": "?",
            "const": True,
            "default": False,
            "help": "Use Nesterov momentum (only used by SGD)",
        },
    ),
    "gpu": (
        ("--gpu",),
        {
            "type": int,
            "default": 1,
            "help": "Use this GPU (starting from 1). Use 0 to run on the CPU.",
        },
    ),
    "seed": (
        ("--seed",),
        {
            "type": lambda x: int(x, 0),
            "default": 0x12345,
            "help": "Seed for random number generators",
        },
    ),
    "max_epochs": (
        ("--max_epochs",),
        {
            "type": NumberInClosedRange(int, vmin=1),
            "help": "Maximum number of training epochs",
        },
    ),
    "max_updates": (
        ("--max_updates",),
        {
            "type": NumberInClosedRange(int, vmin=1),
            "help": "Maximum number of parameter updates during training",
        },
    ),
    "valid_cer_std_window_size": (
        ("--valid_cer_std_window_size",),
        {
            "type": NumberInClosedRange(int, vmin=2),
            "help": "Use this number of epochs to compute the standard "
            "deviation of the validation CER (for early stopping)",
        },
    ),
    "valid_cer_std_threshold": (
        ("--valid_cer_std_threshold",),
        {
            "type": NumberInOpenRange(float, vmin=0),
            "help": "Stop training if the standard deviation of the validation "
            "CER is below this threshold",
        },
    ),
    "valid_map_std_window_size": (
        ("--valid_map_std_window_size",),
        {
            "type": NumberInClosedRange(int, vmin=2),
            "help": "Use this number of epochs to compute the standard "
            "deviation of the validation Mean Average Precision (mAP)",
        },
    ),
    "show_progress_bar": (
        ("--show_progress_bar",),
        {
            "type": str2bool,
            "nargs": "?",
            "const": True,
            "default": False,
            "help": "Whether or not to show a progress bar for each epoch",
        },
    ),
    "use_distortions": (
        ("--use_distortions",),
        {
            "type": str2bool,
            "nargs": "?",
            "const": True,
            "default": False,
            "help": "Use dynamic distortions to augment the training data",
        },
    ),
    "train_samples_per_epoch": (
        ("--train_samples_per_epoch",),
        {
            "type": NumberInClosedRange(int, vmin=1),
            "help": "Use this number of training examples randomly sampled "
            "from the dataset in each epoch",
        },
    ),
    "valid_samples_per_epoch": (
        ("--valid_samples_per_epoch",),
        {
            "type": NumberInClosedRange(int, vmin=1),
            "help": "Use this number of validation examples randomly sampled "
            "from the dataset in each epoch",
        },
    ),
    "iterations_per_update": (
        ("--iterations_per_update",),
        {
            "default": 1,
            "type": NumberInClosedRange(int, vmin=1),
            "metavar": "N",
            "help": "Update parameters every N iterations",
        },
    ),
    "save_checkpoint_interval": (
        ("--save_checkpoint_interval",),
        {
            "type": NumberInClosedRange(int, vmin=1),
            "default": None,
            "metavar": "N",
            "help": "Make checkpoints of the training process every N epochs",
        },
    ),
    "num_rolling_checkpoints": (
        ("--num_rolling_checkpoints",),
        {
            "type": NumberInClosedRange(int, vmin=1),
            "default": 2,
            "metavar": "N",
            "help": "Keep this number of checkpoints during training",
        },
    ),
    "train_path": (
        ("--train_path",),
        {
            "type": str,
            "default": "",
            "help": "Save any files (e.g. checkpoints) in this directory",
        },
    ),
    "logging_also_to_stderr": (
        ("--logging_also_to_stderr",),
        {
            "default": "ERROR",
            "type": str2loglevel,
            "help": "If you are logging to a file, use this level for logging "
            "also to stderr (use any of: debug, info, warning, error, critical)",
        },
    ),
    "logging_config": (
        ("--logging_config",),
        {"type": argparse.FileType("r"), "help": "Use this JSON file to configure the logging"},
    ),
    "logging_file": (
        ("--logging_file",),
        {"type": str, "help": "Write the logs to this file"},
    ),
    "logging_level": (
        ("--logging_level",),
        {
            "default": "INFO",
            "type": str2loglevel,
            "help": "Use this level for logging (use any of: debug, info, "
            "warning, error, critical)",
        },
    ),
    "logging_overwrite": (
        ("--logging_overwrite",),
        {
            "default": False,
            "type": str2bool,
            "nargs": "?",
            "const": True,
            "help": "If true, overwrite the logfile instead of appending it",
        },
    ),
    "print_args": (
        ("--print_args",),
        {
            "default": True,
            "type": str2bool,
            "nargs": "?",
            "const": True,
            "help": "If true, log to INFO the arguments passed to the program",
        },
    ),
}


def _get_parser():
    global _parser
    if not _parser:
        _parser = argparse.ArgumentParser()
        add_defaults(
            "logging_also_to_stderr",
            "logging_config",
            "logging_file",
            "logging_level",
            "logging_overwrite",
            "print_args",
        )
    return _parser


def add_defaults(*args, **kwargs):
    for arg in args:
        args_, kwargs_ = _default_args[arg]
        _get_parser().add_argument(*args_, **kwargs_)
    for arg, default_value in kwargs.items():
        args_, kwargs_ = _default_args[arg]
        kwargs_["default"] = default_value
        _get_parser().add_argument(*args_, **kwargs_)
    return _get_parser()


def add_argument(*args, **kwargs):
    _get_parser().add_argument(*args, **kwargs)
    return _get_parser()


def _check_gpu_arg(parser, args):
    """Validate --gpu against the devices visible to this process.

    Note that CUDA_VISIBLE_DEVICES re-indexes devices, so --gpu 1 always
    refers to the first *visible* card.
    """
    if not hasattr(args, "gpu") or args.gpu is None:
        return
    if args.gpu < 0:
        parser.error("--gpu must be >= 0 (0 = CPU)")
    if args.gpu > 0:
        num_gpus = torch.cuda.device_count()
        if args.gpu > num_gpus:
            parser.error(
                "--gpu {} requested, but only {} GPU(s) are visible".format(
                    args.gpu, num_gpus
                )
            )


def args(unknown_args=False):
    if unknown_args:
        a, unknown = _get_parser().parse_known_args()
    else:
        a = _get_parser().parse_args()
        unknown = None
    _check_gpu_arg(_get_parser(), a)
    # Configure logging
    log_config(
        fmt=None,
        level=a.logging_level,
        filename=a.logging_file,
        filemode="w" if a.logging_overwrite else "a",
        logging_also_to_stderr=a.logging_also_to_stderr,
        config_dict=json.load(a.logging_config) if a.logging_config else None,
    )
    if a.print_args:
        import laia.common.logging as log

        log.get_logger(__name__).info(
            "\n{}", json.dumps(OrderedDict(sorted(vars(a).items())), indent=2, default=str)
        )
    if unknown_args:
        return a, unknown
    return a


def parse_kwargs_from_str(s):
    """Parse things like "a=1,b='x'" into a dict (used for --model_kwargs)."""
    if not s:
        return {}
    out = {}
    for item in s.split(","):
        k, v = item.split("=", 1)
        try:
            out[k.strip()] = literal_eval(v.strip())
        except (ValueError, SyntaxError):
            out[k.strip()] = v.strip()
    return out


def default_train_path():
    return os.getenv("LAIA_TRAIN_PATH", os.getcwd())
