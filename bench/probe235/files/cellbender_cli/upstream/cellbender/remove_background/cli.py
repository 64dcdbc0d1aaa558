"""Command-line tool functionality for remove-background."""

import argparse
import logging
import multiprocessing
import os
import sys
from datetime import datetime

import torch

import cellbender
from cellbender.base_cli import AbstractCLI, get_version
from cellbender.remove_background import consts
from cellbender.remove_background.checkpoint import create_workflow_hashcode
from cellbender.remove_background.run import run_remove_background


def add_subparser_args(subparsers: argparse) -> argparse:
    """Add tool-specific arguments for remove-background."""
    subparser = subparsers.add_parser("remove-background",
                                      description="Remove background RNA "
                                                  "from count matrix.",
                                      help="Remove background ambient RNA "
                                           "and barcode-swapped reads from "
                                           "a count matrix, producing a "
                                           "new count matrix and "
                                           "determining which barcodes "
                                           "contain real cells.",
                                      formatter_class=argparse.ArgumentDefaultsHelpFormatter)

    subparser.add_argument("--input", nargs=None, type=str,
                           dest="input_file",
                           required=True,
                           help="Data file on which to run tool. Data must be "
                                "un-filtered: it should include empty droplets. "
                                "The following input formats are supported: "
                                "CellRanger v2 and v3 (.h5 or the directory that "
                                "contains the .mtx file), Dropseq "
                                "DGE (.txt or .txt.gz), BD Rhapsody (.csv or "
                                ".csv.gz), AnnData (.h5ad), and Loom (.loom).")
    subparser.add_argument("--output", nargs=None, type=str,
                           dest="output_file",
                           required=True,
                           help="Output file location (the path must "
                                "exist, and the file name must have .h5 "
                                "extension).")
    subparser.add_argument("--cuda",
                           dest="use_cuda", action="store_true",
                           help="Including the flag --cuda will run the "
                                "inference on a GPU.")
    subparser.add_argument("--checkpoint", nargs=None, type=str,
                           dest="input_checkpoint_tarball",
                           required=False, default=consts.CHECKPOINT_FILE_NAME,
                           help="Checkpoint tarball produced by the same version "
                                "of CellBender remove-background.  If present, "
                                "and the workflow hashes match, training will "
                                "restart from this checkpoint.")
    subparser.add_argument("--force-use-checkpoint",
                           dest="force_use_checkpoint", action="store_true",
                           help="Normally, checkpoints can only be used if the CellBender "
                                "code and certain input args match exactly. This flag allows you "
                                "to bypass this requirement.")
    subparser.add_argument("--expected-cells", nargs=None, type=int,
                           default=None,
                           dest="expected_cell_count",
                           help="Number of cells expected in the dataset "
                                "(a rough estimate within a factor of 2 "
                                "is sufficient).")
    subparser.add_argument("--total-droplets-included",
                           nargs=None, type=int,
                           default=None,
                           dest="total_droplets",
                           help="The number of droplets from the "
                                "rank-ordered UMI plot that will have their "
                                "cell probabilities inferred as an output. "
                                "Include the droplets which might contain "
                                "cells. Droplets beyond TOTAL_DROPLETS_INCLUDED "
                                "should be 'surely empty' droplets.")
    subparser.add_argument("--model", nargs=None, type=str,
                           default="full",
                           choices=["naive", "simple", "ambient", "swapping", "full"],
                           dest="model",
                           help="Which model is being used for count data.")
    subparser.add_argument("--epochs", nargs=None, type=int, default=150,
                           dest="epochs",
                           help="Number of epochs to train.")
    subparser.add_argument("--training-fraction",
                           type=float, nargs=None,
                           default=consts.TRAINING_FRACTION,
                           dest="training_fraction",
                           help="Training detail: the fraction of the "
                                "data used for training.")
    subparser.add_argument("--empty-drop-training-fraction",
                           type=float, nargs=None,
                           default=consts.FRACTION_EMPTIES,
                           dest="fraction_empties",
                           help="Training detail: the fraction of the "
                                "training data each epoch "
                                "that is drawn (randomly sampled) from "
                                "surely empty droplets.")
    subparser.add_argument("--learning-rate",
                           type=float, default=1e-4,
                           dest="learning_rate",
                           help="Training detail: lower learning rate for "
                                "inference. A OneCycle learning rate schedule "
                                "is used, where the upper learning rate is ten "
                                "times this value. (For this value, probably "
                                "do not exceed 1e-3).")
    subparser.add_argument("--posterior-batch-size", type=int,
                           default=consts.PROB_POSTERIOR_BATCH_SIZE,
                           dest="posterior_batch_size",
                           help="Training detail: size of batches when creating "
                                "the posterior.  Reduce this to avoid running "
                                "out of GPU memory creating the posterior "
                                "(will be slower).")
    subparser.add_argument("--cpu-threads",
                           type=int, default=None, dest="n_threads",
                           help="Number of threads to use when pytorch is run "
                                "on CPU. Defaults to the number of logical cores.")
    subparser.add_argument("--debug",
                           dest="debug", action="store_true",
                           help="Including the flag --debug will log "
                                "extra messages useful for debugging.")
    subparser.add_argument("--use-jit", dest="use_jit", action="store_true",
                           help="Compile the ELBO with the pyro JIT (TorchScript tracing).")
    return subparsers


class CLI(AbstractCLI):
    """CLI implements AbstractCLI from the cellbender package."""

    def __init__(self):
        self.name = "remove-background"
        self.args = None

    def get_name(self) -> str:
        return self.name

    @staticmethod
    def validate_args(args) -> argparse.Namespace:
        """Validate parsed arguments."""

        # Ensure that if there's a tilde for $HOME in the file path, it works.
        try:
            args.input_file = os.path.expanduser(args.input_file)
            args.output_file = os.path.expanduser(args.output_file)
        except TypeError:
            raise ValueError("Problem with provided input and output paths.")

        # Ensure write access to the save directory.
        file_dir, _ = os.path.split(args.output_file)  # Get the output directory
        if file_dir:
            assert os.access(file_dir, os.W_OK), \
                f"Cannot write to specified output directory {file_dir}. " \
                f"Ensure the directory exists and is write accessible."

        # If cuda is requested, make sure it is available.
        if args.use_cuda:
            assert torch.cuda.is_available(), "Trying to use CUDA, but CUDA is not available."
        else:
            # Warn the user in case the CUDA flag was forgotten by mistake.
            if torch.cuda.is_available():
                sys.stdout.write("Your system has an NVIDIA GPU.  Did you want to use CUDA via --cuda? "
                                 "Without --cuda, this run will be much slower.\n")

        # Make sure n_threads makes sense.
        if args.n_threads is not None:
            assert args.n_threads > 0, "--cpu-threads must be an integer >= 1"

        # Ensure all network layer dimensions are positive.
        for n in args.z_hidden_dims:
            assert n > 0, "--z-layers must be all positive integers."

        # Ensure that z_dim is in bounds.
        assert args.z_dim > 0, "--z-dim must be a positive integer."

        assert (args.fraction_empties > 0) and (args.fraction_empties < 1), \
            "--empty-drop-training-fraction must be in (0, 1)."

        assert (args.training_fraction > 0) and (args.training_fraction <= 1), \
            "--training-fraction must be in (0, 1]."

        # Set multiprocessing method so that it works with CUDA.
        if args.use_cuda:
            multiprocessing.set_start_method("spawn", force=True)

        return args

    @staticmethod
    def run(args):
        """Run the main tool functionality on parsed arguments."""
        # Run the tool.
        return main(args)


def setup_and_logging(args):
    """Take command-line input, parse arguments, and run tests or tool."""

    # Send logging messages to stdout as well as a log file.
    file_dir, file_base = os.path.split(args.output_file)
    file_name = os.path.splitext(os.path.basename(file_base))[0]
    log_file = os.path.join(file_dir, file_name + ".log")
    logger = logging.getLogger("cellbender")  # name of the logger
    logger.setLevel(logging.INFO if not args.debug else logging.DEBUG)
    formatter = logging.Formatter("cellbender:remove-background: %(message)s")
    file_handler = logging.FileHandler(filename=log_file, mode="w", encoding="UTF-8")
    console_handler = logging.StreamHandler()
    file_handler.setFormatter(formatter)  # set the file format
    console_handler.setFormatter(formatter)  # use the same format for stdout
    logger.addHandler(file_handler)  # log to file
    logger.addHandler(console_handler)  # log to stdout

    # Log the command as typed by user.
    logger.info("Command:\n"
                + " ".join(["cellbender", "remove-background"] + sys.argv[2:]))
    logger.info("CellBender " + get_version())

    # Log the start time.
    logger.info(datetime.now().strftime("%Y-%m-%d %H:%M:%S"))
    if args.use_cuda:
        logger.info(f"Running on GPU: {torch.cuda.get_device_name(torch.cuda.current_device())}")
    else:
        logger.info("Running on CPU")

    return logger, file_handler


def main(args) -> "Posterior":
    """Take command-line input, parse arguments, and run tests or tool."""

    logger, file_handler = setup_and_logging(args)

    # Run the tool.
    posterior = run_remove_background(args)
    file_handler.close()

    return posterior
