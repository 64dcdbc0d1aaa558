#!/usr/bin/env python3
"""Demo script for training and evaluating HOW (Learning and aggregating deep local descriptors
for instance-level recognition, ECCV 2020).

    python examples/demo_how.py train examples/params/eccv20/train_how_r50-_1000.yml -e official_how_r50-_1000
    python examples/demo_how.py eval examples/params/eccv20/eval_how_r50-_1000.yml -e official_how_r50-_1000
"""

import sys
import os
import os.path
import argparse
import warnings
from pathlib import Path

import yaml
import numpy as np
import torch

from how.stages import evaluate, train
from how.utils import io_helpers, logging, download

from cirtorch.utils.general import get_data_root

warnings.filterwarnings("ignore", category=UserWarning, module="torchvision")


def add_commandline_args(parser):
    """Add arguments to the argparse parser that can override the yaml parameters"""
    parser.add_argument("command", choices=["train", "eval"])
    parser.add_argument("parameters", type=str, help="Relative path to a yaml file that contains parameters")
    parser.add_argument("--experiment", "-e", metavar="NAME", dest="experiment")
    parser.add_argument("--model-load", "-ml", metavar="PATH", dest="demo_eval__net_path")
    parser.add_argument("--features-num", metavar="NUM",
                        dest="evaluation__local_descriptor__features_num", type=int)
    parser.add_argument("--scales", metavar="SCALES", dest="evaluation__multiscale", type=lambda x: [float(y) for y in x.split(",")])
    parser.add_argument("--step", metavar="STEP", dest="evaluation__local_descriptor__datasets", type=int)
    parser.add_argument("--gpu-id", metavar="ID", dest="demo_train__gpu_id", type=int, default=None,
                        help="GPU used for training and evaluation, omit to run on the CPU")
    return parser


def _overwrite_cirtorch_path(cirtorch_path):
    """Hack to fix cirtorch paths"""
    from cirtorch.datasets import traindataset
    from cirtorch.networks import imageretrievalnet

    traindataset.get_data_root = lambda: cirtorch_path
    imageretrievalnet.get_data_root = lambda: cirtorch_path


def main(args):
    """Argument parsing and parameter preparation for the demo"""
    # Arguments
    parser = argparse.ArgumentParser(description="HOW demo replicating results from ECCV 2020.")
    add_commandline_args(parser)
    args = parser.parse_args(args)

    # Load yaml params
    package_root = Path(__file__).resolve().parent.parent
    parameters_path = args.parameters
    if not args.parameters.endswith(".yml"):
        parameters_path = package_root / "examples/params" / args.parameters / f"{args.command}.yml"
    params = io_helpers.load_params(parameters_path)
    # Overlay with command-line arguments
    for arg, val in vars(args).items():
        if arg not in {"command", "parameters"} and val is not None:
            io_helpers.dict_deep_set(params, arg.split("__"), val)

    # Resolve experiment name
    exp_name = params.pop("experiment")
    if not exp_name:
        exp_name = Path(parameters_path).name[:-len(".yml")]

    # Resolve data folders
    globals = {}
    globals["root_path"] = (package_root / params['demo_%s' % args.command]['data_folder'])
    globals["root_path"].mkdir(parents=True, exist_ok=True)
    _overwrite_cirtorch_path(str(globals['root_path']))
    globals["exp_path"] = (package_root / params['demo_%s' % args.command]['exp_folder']) / exp_name
    globals["exp_path"].mkdir(parents=True, exist_ok=True)
    # Setup logging
    globals["logger"] = logging.init_logger(globals["exp_path"] / f"{args.command}.log")

    # Run demo
    io_helpers.save_params(globals["exp_path"] / f"{args.command}_params.yml", params)
    if args.command == "eval":
        download.download_for_eval(params['evaluation'], params['demo_eval'], package_root, globals['root_path'])
        globals["device"] = torch.device("cpu")
        if params['demo_eval']['gpu_id'] is not None:
            globals["device"] = torch.device(("cuda:%s" % params['demo_eval']['gpu_id']))
        evaluate.evaluate_demo(**params, globals=globals)
    elif args.command == "train":
        download.download_for_train(params['validation'], globals['root_path'])
        globals["device"] = torch.device("cpu")
        if params['demo_train']['gpu_id'] is not None:
            globals["device"] = torch.device(("cuda:%s" % params['demo_train']['gpu_id']))
        train.train(**params, globals=globals)


if __name__ == "__main__":
    main(sys.argv[1:])
