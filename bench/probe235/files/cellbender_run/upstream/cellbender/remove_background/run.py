"""Single run of remove-background, given input arguments."""

import argparse
import logging
import os
import sys
import traceback
from datetime import datetime
from typing import Dict, Optional, Tuple, Union

import numpy as np
import psutil
import pyro
import torch
from pyro.infer import SVI, JitTraceEnum_ELBO, JitTrace_ELBO, TraceEnum_ELBO, Trace_ELBO
from pyro.optim import ClippedAdam

import cellbender.remove_background.consts as consts
from cellbender.remove_background.checkpoint import (
    attempt_load_checkpoint,
    create_workflow_hashcode,
    save_checkpoint,
)
from cellbender.remove_background.data.dataprep import prep_sparse_data_for_training as prep_data_for_training
from cellbender.remove_background.data.dataset import (
    SingleCellRNACountsDataset,
    get_dataset_obj,
)
from cellbender.remove_background.exceptions import ElboException
from cellbender.remove_background.model import RemoveBackgroundPyroModel
from cellbender.remove_background.posterior import Posterior, load_or_compute_posterior_and_save
from cellbender.remove_background.report import run_notebook_make_html
from cellbender.remove_background.train import run_training
from cellbender.remove_background.vae.decoder import Decoder
from cellbender.remove_background.vae.encoder import CompositeEncoder, EncodeNonZLatents, EncodeZ

logger = logging.getLogger("cellbender")


def run_remove_background(args: argparse.Namespace) -> Posterior:
    """The full remove-background pipeline, supporting checkpoint restarts.

    Args:
        args: Input command line parsed arguments.

    Returns:
        posterior: Posterior object
    """
    # Handle initial random state.
    pyro.util.set_rng_seed(consts.RANDOM_SEED)

    # Start from a checkpoint, or compute the workflow hash for a fresh run.
    args.checkpoint_filename = create_workflow_hashcode(
        module_path=os.path.dirname(cellbender.__file__),
        args_to_remove=(
            ["output_file", "fpr", "input_checkpoint_tarball", "debug", "posterior_batch_size",
             "alpha", "use_multiprocessing", "cpu_threads", "estimator", "estimator_multiple_cpu",
             "checkpoint_min", "force_use_checkpoint"]
        ),
        args=args,
    )[:10]

    # Load data from file and choose barcodes and genes to analyze.
    try:
        dataset_obj = get_dataset_obj(args=args)
    except OSError:
        logger.error(f"OSError: Unable to open file {args.input_file}.")
        logger.error(traceback.format_exc())
        sys.exit(1)

    # Run pytorch multithreaded if running on CPU: but this makes little difference in runtime.
    if not args.use_cuda:
        if args.n_threads is not None:
            n_jobs = args.n_threads
        else:
            n_jobs = psutil.cpu_count(logical=True)
        torch.set_num_threads(n_jobs)
        logger.debug(f"Set pytorch to use {n_jobs} threads")

    # Instantiate latent variable model and run full inference procedure.
    if args.model == "naive":
        inferred_model = None
    else:
        inferred_model, _, _, _ = run_inference(
            dataset_obj=dataset_obj,
            args=args,
            output_checkpoint_tarball=consts.CHECKPOINT_FILE_NAME,
        )
        inferred_model.eval()

    try:
        file_dir, file_base = os.path.split(args.output_file)
        file_name = os.path.splitext(os.path.basename(file_base))[0]

        # Create the posterior and save it.
        posterior = load_or_compute_posterior_and_save(
            dataset_obj=dataset_obj,
            inferred_model=inferred_model,
            args=args,
        )
        if posterior.latents_map is not None:
            logger.info("Posterior latent variables computed.")

        # Save output plots and files.
        write_outputs(dataset_obj=dataset_obj, posterior=posterior, args=args, file_name=file_name)

        if not args.debug:
            # Make report notebook.
            run_notebook_make_html(file=os.path.join(file_dir, file_name + "_report.ipynb"))

        logger.info("Completed remove-background.")
        logger.info(datetime.now().strftime("%Y-%m-%d %H:%M:%S\n"))
        return posterior

    except Exception:
        logger.error(traceback.format_exc())
        logger.error("Failed to write outputs.")
        raise


def write_outputs(dataset_obj, posterior, args, file_name):
    """Write the denoised h5, the barcode list, metrics and figures."""
    file_dir = os.path.dirname(args.output_file)
    dataset_obj.save_to_output_file(
        output_file=args.output_file,
        posterior=posterior,
        posterior_batch_size=args.posterior_batch_size,
        cell_probability_cutoff=consts.CELL_PROB_CUTOFF,
    )
    barcodes = dataset_obj.data["barcodes"][posterior.latents_map["p"] > consts.CELL_PROB_CUTOFF]
    np.savetxt(os.path.join(file_dir, file_name + "_cell_barcodes.csv"), barcodes, delimiter=",", fmt="%s")
    logger.info(f"Saved cell barcodes in {file_name}_cell_barcodes.csv")


def get_optimizer(n_batches: int, batch_size: int, epochs: int, learning_rate: float,
                  constant_learning_rate: bool, total_epochs_for_testing_only: Optional[int] = None):
    """Get optimizer or learning rate scheduler (if using one)."""

    # Set up the optimizer.
    optimizer = pyro.optim.clipped_adam.ClippedAdam
    optimizer_args = {"lr": learning_rate, "clip_norm": 10.0}

    # Set up a learning rate scheduler.
    if total_epochs_for_testing_only is not None:
        total_steps = n_batches * total_epochs_for_testing_only
    else:
        total_steps = n_batches * epochs
    scheduler_args = {
        "optimizer": optimizer,
        "max_lr": learning_rate * 10,
        "total_steps": total_steps,
        "optim_args": optimizer_args,
    }
    if constant_learning_rate:
        logger.info("Using ClippedAdam --constant-learning-rate rather than " "the OneCycleLR schedule. This is not usually recommended.")
        scheduler = ClippedAdam(optimizer_args)
    else:
        scheduler = pyro.optim.OneCycleLR(scheduler_args)

    return scheduler


def run_inference(
    dataset_obj: SingleCellRNACountsDataset,
    args: argparse.Namespace,
    output_checkpoint_tarball: str = consts.CHECKPOINT_FILE_NAME,
    total_epochs_for_testing_only: Optional[int] = None,
) -> Tuple[RemoveBackgroundPyroModel, pyro.optim.PyroOptim, "DataLoader", "DataLoader"]:
    """Run a full inference procedure, training a latent variable model.

    Args:
        dataset_obj: Input data in the form of a SingleCellRNACountsDataset
            object.
        args: Input command line parsed arguments.
        output_checkpoint_tarball: Intended checkpoint tarball filepath.
        total_epochs_for_testing_only: Hack for testing code using LR scheduler

    Returns:
         model: cellbender.model.RemoveBackgroundPyroModel that has had
            inference run.

    """

    # Get the checkpoint file base name with hash, which we stored in args.
    checkpoint_filename = args.checkpoint_filename

    # Configure pyro options (skip validations to improve speed).
    pyro.enable_validation(False)
    pyro.distributions.enable_validation(False)

    # Set random seed, updating global state of python, numpy, and torch RNGs.
    pyro.clear_param_store()
    pyro.set_rng_seed(consts.RANDOM_SEED)
    if args.use_cuda:
        torch.cuda.manual_seed_all(consts.RANDOM_SEED)

    # Attempt to load from a previously-saved checkpoint.
    ckpt = attempt_load_checkpoint(
        filebase=checkpoint_filename,
        tarball_name=args.input_checkpoint_tarball,
        force_device="cuda:0" if args.use_cuda else "cpu",
        force_use_checkpoint=args.force_use_checkpoint,
    )
    ckpt_loaded = ckpt["loaded"]  # True if a checkpoint was loaded successfully

    if ckpt_loaded:
        model = ckpt["model"]
        scheduler = ckpt["optim"]
        train_loader = ckpt["train_loader"]
        test_loader = ckpt["test_loader"]
        if hasattr(ckpt["args"], "num_failed_attempts"):
            # update this from the checkpoint file, if present
            args.num_failed_attempts = ckpt["args"].num_failed_attempts
        logger.info("Checkpoint loaded successfully.")

    else:
        logger.info("No checkpoint loaded.")

        # Get the trimmed count matrix (transformed if called for).
        count_matrix = dataset_obj.get_count_matrix()

        # Set up the variational autoencoder:

        # Encoder.
        encoder_z = EncodeZ(
            input_dim=count_matrix.shape[1],
            hidden_dims=args.z_hidden_dims,
            output_dim=args.z_dim,
            use_batch_norm=False,
            use_layer_norm=False,
            input_transform="normalize",
        )

        encoder_other = EncodeNonZLatents(
            n_genes=count_matrix.shape[1],
            z_dim=args.z_dim,
            log_count_crossover=dataset_obj.priors["log_counts_crossover"],
            prior_log_cell_counts=np.log1p(dataset_obj.priors["cell_counts"]),
            empty_log_count_threshold=np.log1p(dataset_obj.empty_UMI_threshold),
            prior_logit_cell_prob=dataset_obj.priors["logit_cell_prob"],
            input_transform="normalize",
        )

        encoder = CompositeEncoder({"z": encoder_z, "other": encoder_other})

        # Decoder.
        decoder = Decoder(
            input_dim=args.z_dim,
            hidden_dims=args.z_hidden_dims[::-1],
            use_batch_norm=True,
            use_layer_norm=False,
            output_dim=count_matrix.shape[1],
        )

        # Set up the pyro model for variational inference.
        model = RemoveBackgroundPyroModel(
            model_type=args.model,
            encoder=encoder,
            decoder=decoder,
            dataset_obj_priors=dataset_obj.priors,
            n_analyzed_genes=dataset_obj.analyzed_gene_inds.size,
            n_droplets=dataset_obj.analyzed_barcode_inds.size,
            analyzed_gene_names=dataset_obj.data["gene_names"][dataset_obj.analyzed_gene_inds],
            empty_UMI_threshold=dataset_obj.empty_UMI_threshold,
            log_counts_crossover=dataset_obj.priors["log_counts_crossover"],
            use_cuda=args.use_cuda,
        )

        # Load the dataset into DataLoaders.
        frac = args.training_fraction  # Fraction of barcodes to use for training
        batch_size = int(min(consts.MAX_BATCH_SIZE, frac * dataset_obj.analyzed_barcode_inds.size / 2))

        # Set up dataloaders.
        train_loader, test_loader = prep_data_for_training(
            dataset=count_matrix,
            empty_drop_dataset=dataset_obj.get_count_matrix_empties(),
            batch_size=batch_size,
            training_fraction=frac,
            fraction_empties=args.fraction_empties,
            shuffle=True,
            use_cuda=args.use_cuda,
        )

        # Set up optimizer (optionally wrapped in a learning rate scheduler).
        scheduler = get_optimizer(
            n_batches=len(train_loader),
            batch_size=train_loader.batch_size,
            epochs=args.epochs,
            learning_rate=args.learning_rate,
            constant_learning_rate=args.constant_learning_rate,
            total_epochs_for_testing_only=total_epochs_for_testing_only,
        )

    # Determine the loss function.
    if args.use_jit:

        # Call guide() once as a warm-up.
        model.guide(torch.zeros([10, dataset_obj.analyzed_gene_inds.size]).to(model.device))

        if args.model == "simple":
            loss_function = JitTrace_ELBO()
        else:
            loss_function = JitTraceEnum_ELBO(max_plate_nesting=1, strict_enumeration_warning=False)
    else:

        if args.model == "simple":
            loss_function = Trace_ELBO()
        else:
            loss_function = TraceEnum_ELBO(max_plate_nesting=1)

    # Set up the inference process.
    svi = SVI(model.model, model.guide, scheduler, loss=loss_function)

    # Run training.
    if args.epochs == 0:
        logger.info("Zero epochs specified... will only initialize the model.")
        model.guide(train_loader.__next__())
        train_loader.reset_ptr()

        # Even though it's not much of a checkpoint, we still need one for subsequent steps.
        save_checkpoint(
            filebase=checkpoint_filename,
            tarball_name=output_checkpoint_tarball,
            args=args,
            model_obj=model,
            scheduler=scheduler,
            train_loader=train_loader,
            test_loader=test_loader,
        )

    else:
        logger.info("Running inference...")
        try:
            run_training(
                model=model,
                args=args,
                svi=svi,
                train_loader=train_loader,
                test_loader=test_loader,
                epochs=args.epochs,
                test_freq=5,
                final_elbo_fail_fraction=args.final_elbo_fail_fraction,
                epoch_elbo_fail_fraction=args.epoch_elbo_fail_fraction,
                ckpt_tarball_name=output_checkpoint_tarball,
                checkpoint_freq=args.checkpoint_min,
            )

        except ElboException:

            logger.warning(traceback.format_exc())

            # Keep track of number of failed attempts.
            if not hasattr(args, "num_failed_attempts"):
                args.num_failed_attempts = 1
            else:
                args.num_failed_attempts = args.num_failed_attempts + 1
            logger.debug(f"Training failed, and the number of failed attempts "
                         f"on record is {args.num_failed_attempts}")

            # Retry training with reduced learning rate, if indicated by user.
            logger.debug(f"Number of times to retry training is {args.num_training_tries}")
            if args.num_failed_attempts < args.num_training_tries:
                args.learning_rate = args.learning_rate * args.learning_rate_retry_mult
                logger.info(f"Restarting training: attempt {args.num_failed_attempts + 1}, "
                            f"learning_rate = {args.learning_rate}")
                if args.use_cuda:
                    torch.cuda.empty_cache()
                run_remove_background(args)  # start from scratch
                sys.exit(0)
            else:
                logger.info(f"No more attempts are specified by --num-training-tries. "
                            f"Therefore the workflow will run once more without ELBO restrictions.")
                args.epoch_elbo_fail_fraction = None
                args.final_elbo_fail_fraction = None
                run_remove_background(args)
                sys.exit(0)

    logger.info("Inference procedure complete.")

    return model, scheduler, train_loader, test_loader
