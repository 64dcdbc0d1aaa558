"""Helper functions for training."""

import logging
import time
from datetime import datetime
from typing import List, Optional, Tuple, Union

import numpy as np
import pyro
import torch
from pyro.infer import SVI
from pyro.util import ignore_jit_warnings

import cellbender.remove_background.consts as consts
from cellbender.monitor import get_hardware_usage
from cellbender.remove_background.checkpoint import save_checkpoint
from cellbender.remove_background.data.dataprep import DataLoader
from cellbender.remove_background.exceptions import ElboException, NanException
from cellbender.remove_background.model import RemoveBackgroundPyroModel

logger = logging.getLogger("cellbender")


def is_scheduler(optim):
    """Currently is_scheduler is on a pyro dev branch"""
    if hasattr(optim, "is_scheduler"):
        return optim.is_scheduler()
    else:
        return type(optim) == pyro.optim.lr_scheduler.PyroLRScheduler


def train_epoch(svi: SVI, train_loader: Union[DataLoader, torch.utils.data.DataLoader]) -> float:
    """Train a single epoch.

    Args:
        svi: The pyro object used for stochastic variational inference.
        train_loader: Dataloader for training set.

    Returns:
        total_epoch_loss_train: The loss for this epoch of training, which is
            -ELBO, normalized by the number of items in the training set.

    """

    # Initialize loss accumulator and training set size.
    epoch_loss = 0.0
    normalizer_train = 0.0

    # Train an epoch by going through each mini-batch.
    for x_cell_batch in train_loader:
        # Perform gradient descent step and accumulate loss.
        epoch_loss += svi.step(x_cell_batch)
        normalizer_train += x_cell_batch.size(0)

        if is_scheduler(svi.optim):
            svi.optim.step()  # for LR scheduling

    # Return epoch loss.
    total_epoch_loss_train = epoch_loss / normalizer_train

    return total_epoch_loss_train


def evaluate_epoch(svi: pyro.infer.SVI, test_loader: Union[DataLoader, torch.utils.data.DataLoader]) -> float:
    """Evaluate loss on tests set for a single epoch.

    Args:
        svi: The pyro object used for stochastic variational inference.
        test_loader: Dataloader for tests set.

    Returns:
        total_epoch_loss_train: The loss for this epoch of training, which is
            -ELBO, normalized by the number of items in the training set.

    """

    # Initialize loss accumulator and training set size.
    test_loss = 0.0
    normalizer_test = 0.0

    # Compute the loss over the entire tests set.
    for x_cell_batch in test_loader:

        # Accumulate loss.
        test_loss += svi.evaluate_loss(x_cell_batch)
        normalizer_test += x_cell_batch.size(0)

    # Return epoch loss.
    total_epoch_loss_test = test_loss / normalizer_test

    return total_epoch_loss_test


def _format_cuda_memory(device_index: int = 0) -> str:
    """Human-readable GPU memory usage, for the log."""
    allocated = torch.cuda.memory_allocated(device_index) / 1e9
    reserved = torch.cuda.memory_reserved(device_index) / 1e9
    return f"GPU memory: {allocated:.2f} GB allocated, {reserved:.2f} GB reserved"


def run_training(
    model: RemoveBackgroundPyroModel,
    args: "argparse.Namespace",
    svi: pyro.infer.SVI,
    train_loader: Union[DataLoader, torch.utils.data.DataLoader],
    test_loader: Union[DataLoader, torch.utils.data.DataLoader],
    epochs: int,
    test_freq: int = 10,
    final_elbo_fail_fraction: Optional[float] = None,
    epoch_elbo_fail_fraction: Optional[float] = None,
    ckpt_tarball_name: str = consts.CHECKPOINT_FILE_NAME,
    checkpoint_freq: int = 10,
) -> Tuple[List[float], List[float]]:
    """Run an entire course of training, evaluating on a tests set periodically.

    Args:
        model: The model, here in order to store train and tests loss.
        args: Parsed arguments, which get saved to checkpoints.
        svi: The pyro object used for stochastic variational inference.
        train_loader: Dataloader for training set.
        test_loader: Dataloader for tests set.
        epochs: Number of epochs to run training.
        test_freq: Test set loss is calculated every test_freq epochs of
            training.
        final_elbo_fail_fraction: Fail if final test ELBO >=
            best ELBO * (1 + this value)
        epoch_elbo_fail_fraction: Fail if current test ELBO >=
            previous ELBO * (1 + this value)
        ckpt_tarball_name: Name of checkpoint tarball
        checkpoint_freq: Checkpoint after this many minutes

    Returns:
        total_epoch_loss_train: The loss for this epoch of training, which is
            -ELBO, normalized by the number of items in the training set.

    """

    # Initialize train and tests ELBO with empty lists.
    train_elbo = []
    test_elbo = []
    lr = []
    epoch_checkpoint_freq = 1000  # a large number... it will be recalculated
    epoch_checkpoint_duration = None

    # Enable the learning rate scheduler if not in use before.
    if is_scheduler(svi.optim):
        epoch_start = model.loss["train"]["epoch"][-1] + 1 if len(model.loss["train"]["epoch"]) > 0 else 0
    else:
        epoch_start = 0

    if epoch_start > 0:
        logger.info("Continuing training from checkpoint at epoch " + str(epoch_start))

    # Run training loop.  Use try to allow for keyboard interrupt.
    try:

        start_time = time.time()
        last_checkpoint_time = start_time

        for epoch in range(epoch_start, epochs + 1):

            # In debug mode, log hardware usage
            if args.debug:
                usage = get_hardware_usage(use_cuda=args.use_cuda)
                logger.debug("\n" + usage)
                if args.use_cuda:
                    logger.debug(_format_cuda_memory())

            t = time.time()

            # Run training.
            model.train()
            train_elbo.append(-train_epoch(svi, train_loader))
            model.loss["train"]["epoch"].append(epoch)
            model.loss["train"]["elbo"].append(train_elbo[-1])
            if args.use_cuda:
                # make sure the epoch is really done before timing it
                torch.cuda.synchronize()
            t_duration = time.time() - t
            model.loss["learning_rate"]["epoch"].append(epoch)
            lr.append(list(svi.optim.get_state().values())[0]["param_groups"][0]["lr"])
            model.loss["learning_rate"]["value"].append(lr[-1])
            logger.info("[epoch %03d]  average training loss: %.4f  (%.1f seconds per epoch)"
                        % (epoch, -train_elbo[-1], t_duration))

            # Evaluate on test dataset every test_freq epochs.
            if (test_freq > 0) and (epoch % test_freq == 0) and (epoch > 0) and (test_loader is not None):
                model.eval()
                with torch.no_grad():
                    test_elbo.append(-evaluate_epoch(svi, test_loader))
                model.loss["test"]["epoch"].append(epoch)
                model.loss["test"]["elbo"].append(test_elbo[-1])
                logger.info("[epoch %03d] average test loss: %.4f" % (epoch, -test_elbo[-1]))

                # Check for ELBO dropping (and abort training).
                if epoch_elbo_fail_fraction is not None and len(test_elbo) > 1:
                    if (test_elbo[-1] < test_elbo[-2]) and \
                            ((test_elbo[-2] - test_elbo[-1]) / (test_elbo[-2] - test_elbo[0])
                             > epoch_elbo_fail_fraction):
                        logger.info("Training failed because this test loss "
                                    f"({-test_elbo[-1]:.2f}) exceeds previous test loss "
                                    f"({-test_elbo[-2]:.2f}) by >= "
                                    f"{100 * epoch_elbo_fail_fraction:.1f}%, "
                                    "relative to initial ELBO.")
                        raise ElboException()

            # Checkpoint throughout and after final epoch.
            if ((checkpoint_freq > 0) and (epoch % epoch_checkpoint_freq == 0)) or (epoch == epochs):

                # Checkpoint here.
                save_successful = save_checkpoint(
                    filebase=args.checkpoint_filename,
                    tarball_name=ckpt_tarball_name,
                    args=args,
                    model_obj=model,
                    scheduler=svi.optim,
                    train_loader=train_loader,
                    test_loader=test_loader,
                )

                # Figure out the timing of epoch checkpoints, based on wall time.
                if save_successful and (epoch_checkpoint_duration is None):
                    epoch_checkpoint_duration = time.time() - last_checkpoint_time
                    epoch_checkpoint_freq = max(1, int(np.floor(checkpoint_freq * 60 / epoch_checkpoint_duration)))
                    logger.info(f"Will checkpoint every {epoch_checkpoint_freq} epochs")
                last_checkpoint_time = time.time()

        # Check final ELBO for failure.
        if final_elbo_fail_fraction is not None and len(test_elbo) > 1:
            best_test_elbo = max(test_elbo)
            if test_elbo[-1] < best_test_elbo:
                final_best_diff = best_test_elbo - test_elbo[-1]
                initial_best_diff = best_test_elbo - test_elbo[0]
                if (final_best_diff / initial_best_diff) > final_elbo_fail_fraction:
                    logger.info("Training failed because final test loss "
                                f"({-test_elbo[-1]:.2f}) exceeds best test loss "
                                f"({-best_test_elbo:.2f}) by >= "
                                f"{100 * final_elbo_fail_fraction:.1f}%, "
                                "relative to initial ELBO.")
                    raise ElboException()

    # Exception allows program to continue after ending inference prematurely.
    except KeyboardInterrupt:
        logger.info("Inference procedure stopped by keyboard interrupt... "
                    "will save a checkpoint.")
        save_checkpoint(
            filebase=args.checkpoint_filename,
            tarball_name=ckpt_tarball_name,
            args=args,
            model_obj=model,
            scheduler=svi.optim,
            train_loader=train_loader,
            test_loader=test_loader,
        )

    except ElboException:
        logger.info("ELBO check failed; handing back to run_inference.")
        raise

    # Exception allows program to produce output when terminated by a NaN.
    except NanException as nan:
        print(nan)
        logger.info("Inference procedure terminated early due to a NaN value in: " + nan.param + "\n\n"
                    "The suggested fix is to reduce the learning rate by a factor of two.\n\n")

    logger.info("Inference procedure complete.")
    logger.info(datetime.now().strftime("%Y-%m-%d %H:%M:%S"))

    return train_elbo, test_elbo
