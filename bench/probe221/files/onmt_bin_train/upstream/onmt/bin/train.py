#!/usr/bin/env python
"""Train models with dynamic data."""
import os
import sys
from functools import partial

import torch

from onmt.utils.distributed import ErrorHandler, spawned_train
from onmt.utils.misc import set_random_seed
from onmt.utils.logging import init_logger, logger
from onmt.utils.parse import ArgumentParser
from onmt.opts import train_opts
from onmt.train_single import main as single_main

# Set sharing strategy manually instead of default based on the OS.
# torch.multiprocessing.set_sharing_strategy('file_system')

# Make hangs in collective ops surface as errors instead of silent stalls
# (one dead rank would otherwise block the whole job forever).
os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")


def _check_devices(opt):
    """Sanity checks between the requested ranks and the visible devices."""
    if torch.cuda.is_available() and not opt.gpu_ranks:
        logger.warning("You have a CUDA device, should run with -gpu_ranks")
    n_visible = torch.cuda.device_count()
    if len(opt.gpu_ranks) > 0 and n_visible == 0:
        raise AssertionError(
            "-gpu_ranks is set but no CUDA device is visible "
            "(check CUDA_VISIBLE_DEVICES / nvidia-smi)"
        )
    local_ranks = [r for r in opt.gpu_ranks if r < n_visible]
    if opt.world_size > 1 and len(local_ranks) < len(opt.gpu_ranks):
        logger.warning(
            "Some gpu_ranks are larger than the number of local devices (%d); "
            "assuming a multi-node run" % n_visible
        )


def train(opt):
    init_logger(opt.log_file)

    ArgumentParser.validate_train_opts(opt)
    ArgumentParser.update_model_opts(opt)
    ArgumentParser.validate_model_opts(opt)
    _check_devices(opt)

    set_random_seed(opt.seed, False)

    train_process = partial(single_main)

    nb_gpu = len(opt.gpu_ranks)

    if opt.world_size > 1:
        mp = torch.multiprocessing.get_context("spawn")
        # Create a thread to listen for errors in the child processes.
        error_queue = mp.SimpleQueue()
        error_handler = ErrorHandler(error_queue)
        # Train with multiprocessing.
        procs = []
        for device_id in range(nb_gpu):
            procs.append(
                mp.Process(
                    target=spawned_train,
                    args=(train_process, opt, device_id, error_queue),
                    daemon=False,
                )
            )
            procs[device_id].start()
            logger.info(" Starting process pid: %d  " % procs[device_id].pid)
            error_handler.add_child(procs[device_id].pid)
        for p in procs:
            p.join()

    elif nb_gpu == 1:  # case 1 GPU only
        train_process(opt, device_id=0)
    else:  # case only CPU
        train_process(opt, device_id=-1)


def _get_parser():
    parser = ArgumentParser(description="train.py")
    train_opts(parser)
    return parser


def main():
    parser = _get_parser()

    opt, unknown = parser.parse_known_args()
    if unknown:
        logger.warning("Ignoring unknown arguments: %s" % " ".join(unknown))
    train(opt)


if __name__ == "__main__":
    sys.exit(main())
