#!/usr/bin/env python
"""Train models with dynamic data."""
import sys
import torch
from functools import partial

from onmt.utils.distributed import ErrorHandler, spawned_train
from onmt.utils.misc import set_random_seed
from onmt.utils.logging import init_logger, logger
from onmt.utils.parse import ArgumentParser
from onmt.opts import dynamic_prepare_opts, train_opts
from onmt.inputters.dynamic_iterator import build_dynamic_dataset_iter
from onmt.train_single import main as single_main


def distributed_opts(parser):
    """Options related to multi-GPU / multi-node training."""
    group = parser.add_argument_group("Distributed")
    group.add(
        "--gpu_ranks",
        "-gpu_ranks",
        default=[],
        nargs="*",
        type=int,
        help="list of ranks of each process.",
    )
    group.add(
        "--world_size",
        "-world_size",
        default=1,
        type=int,
        help="total number of distributed processes.",
    )
    group.add(
        "--gpu_backend",
        "-gpu_backend",
        default="nccl",
        type=str,
        help="Type of torch distributed backend",
    )
    group.add(
        "--gpu_verbose_level",
        "-gpu_verbose_level",
        default=0,
        type=int,
        help="Gives more info on each process per GPU.",
    )
    group.add(
        "--master_ip",
        "-master_ip",
        default="localhost",
        type=str,
        help="IP of master for torch.distributed training.",
    )
    group.add(
        "--master_port",
        "-master_port",
        default=10000,
        type=int,
        help="Port of master for torch.distributed training.",
    )
    group.add(
        "--parallel_mode",
        "-parallel_mode",
        default="data_parallel",
        choices=["tensor_parallel", "data_parallel"],
        type=str,
        help="Distributed mode, tensor parallel or data parallel. "
        "Tensor parallel requires CUDA and splits the model across GPUs.",
    )


def prepare_transforms_vocabs(opt, transforms_cls):
    """Prepare or dump transforms before training."""
    from onmt.transforms import make_transforms, save_transforms
    from onmt.inputters.inputter import build_vocab

    vocabs = build_vocab(opt, None)
    transforms = make_transforms(opt, transforms_cls, vocabs)
    if opt.dump_transforms:
        save_transforms(transforms, opt.save_data, overwrite=opt.overwrite)
    return vocabs, transforms


def _get_model_opts(opt, checkpoint=None):
    if checkpoint is not None:
        model_opt = ArgumentParser.ckpt_model_opts(checkpoint["opt"])
        ArgumentParser.update_model_opts(model_opt)
        ArgumentParser.validate_model_opts(model_opt)
        return model_opt
    return opt


def train(opt):
    init_logger(opt.log_file)
    ArgumentParser.validate_train_opts(opt)
    ArgumentParser.update_model_opts(opt)
    ArgumentParser.validate_model_opts(opt)

    set_random_seed(opt.seed, False)

    checkpoint = None
    if opt.train_from:
        logger.info("Loading checkpoint from %s" % opt.train_from)
        checkpoint = torch.load(opt.train_from, map_location=lambda storage, loc: storage)
    model_opt = _get_model_opts(opt, checkpoint)

    train_process = partial(single_main, checkpoint=checkpoint)

    nb_gpu = len(opt.gpu_ranks)

    if opt.world_size > 1:
        if nb_gpu > torch.cuda.device_count():
            raise ValueError("Requested %d GPUs but only %d are visible" % (nb_gpu, torch.cuda.device_count()))
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


def use_gpu(opt):
    """Creates a boolean if gpu used"""
    return (hasattr(opt, "gpu_ranks") and len(opt.gpu_ranks) > 0) or (hasattr(opt, "gpu") and opt.gpu > -1)


def build_device(opt, device_id):
    if device_id >= 0:
        torch.cuda.set_device(device_id)
        return torch.device("cuda", device_id)
    return torch.device("cpu")


def _get_parser():
    parser = ArgumentParser(description="train.py")
    train_opts(parser)
    distributed_opts(parser)
    return parser


def main():
    parser = _get_parser()
    opt, unknown = parser.parse_known_args()
    train(opt)


if __name__ == "__main__":
    sys.exit(main())
