"""Handle the saving and loading of checkpoints (model, optimizer, RNG state)."""

import glob
import hashlib
import logging
import os
import pickle
import random
import shutil
import tarfile
import tempfile
import time
import traceback
import uuid
from typing import Dict, List, Optional, Tuple, Union

import numpy as np
import pyro
import torch

import cellbender.remove_background.consts as consts

logger = logging.getLogger("cellbender")

USE_PYRO = True
try:
    import pyro
except ImportError:
    USE_PYRO = False
USE_CUDA = torch.cuda.is_available()


def save_random_state(filebase: str) -> List[str]:
    """Write all random states (torch, numpy, python) to files"""
    # https://stackoverflow.com/questions/32808686/storing-a-random-state/32809283
    file_dict = {}

    # Random state information
    python_random_state = random.getstate()
    numpy_random_state = np.random.get_state()
    torch_random_state = torch.get_rng_state()

    pickle_and_save(python_random_state, filebase + "_random.python")
    pickle_and_save(numpy_random_state, filebase + "_random.numpy")
    torch.save(torch_random_state, filebase + "_random.torch")
    file_dict.update({filebase + "_random.python": python_random_state,
                      filebase + "_random.numpy": numpy_random_state,
                      filebase + "_random.torch": torch_random_state})

    # If using CUDA, save the CUDA random state too.
    if USE_CUDA:
        cuda_random_state = torch.cuda.get_rng_state_all()
        file_dict.update({filebase + "_random.cuda": cuda_random_state})
        torch.save(cuda_random_state, filebase + "_random.cuda")

    return list(file_dict.keys())


def load_random_state(filebase: str):
    """Load random states (torch, numpy, python) from files"""
    python_random_state = load_and_unpickle(filebase + "_random.python")
    numpy_random_state = load_and_unpickle(filebase + "_random.numpy")
    torch_random_state = torch.load(filebase + "_random.torch")
    random.setstate(python_random_state)
    np.random.set_state(numpy_random_state)
    torch.set_rng_state(torch_random_state)
    if USE_CUDA and os.path.exists(filebase + "_random.cuda"):
        cuda_random_state = torch.load(filebase + "_random.cuda")
        torch.cuda.set_rng_state_all(cuda_random_state)


def create_workflow_hashcode(module_path: str,
                             args: "argparse.Namespace",
                             args_to_remove: List[str] = ["epochs", "fpr"],
                             name: str = "md5",
                             verbose: bool = False) -> str:
    """Create a hash blob from cellbender python code plus input arguments."""

    hasher = hashlib.new(name=name)

    files_safe_to_ignore = ["infer.py", "simulate.py", "report.py", "downstream.py",
                            "monitor.py", "fpr.py", "posterior.py", "estimation.py",
                            "sparse_utils.py"]

    if not os.path.exists(module_path):
        return ""

    try:

        # files
        for root, _, files in os.walk(module_path):
            for file in files:
                if not file.endswith(".py"):
                    continue
                if file in files_safe_to_ignore:
                    continue
                if "test" in file:
                    continue
                if verbose:
                    print(file)
                with open(os.path.join(root, file), "rb") as f:
                    buf = b"\n".join(f.readlines())
                hasher.update(buf)  # encode python files

        # inputs
        args_dict = vars(args).copy()
        for arg in args_to_remove:
            args_dict.pop(arg, None)
        hasher.update(str(args_dict).encode("utf-8"))  # encode parsed input args

        # input file
        # TODO
        # this is probably not necessary for real data... why would two different
        # files have the same name?
        # but it's useful for development where simulated datasets change

    except Exception:
        return ""

    return hasher.hexdigest()


def save_checkpoint(filebase: str,
                    args: "argparse.Namespace",
                    model_obj: "RemoveBackgroundPyroModel",
                    scheduler: pyro.optim.PyroOptim,
                    train_loader: "DataLoader",
                    test_loader: "DataLoader",
                    tarball_name: str = consts.CHECKPOINT_FILE_NAME) -> bool:
    """Save trained model and optimizer state in a checkpoint file.
    Any hyperparameters or metadata should be part of the model object."""

    logger.info(f"Saving a checkpoint...")

    try:

        # Work in a temporary directory.
        with tempfile.TemporaryDirectory() as tmp_dir:

            basename = os.path.basename(filebase)
            filebase = os.path.join(tmp_dir, basename)

            file_list = save_random_state(filebase=filebase)

            torch.save(model_obj, filebase + "_model.torch")
            torch.save(scheduler, filebase + "_optim.torch")
            scheduler.save(filebase + "_optim.pyro")  # use PyroOptim method
            pyro.get_param_store().save(filebase + "_params.pyro")
            file_list.extend([filebase + "_model.torch",
                              filebase + "_optim.torch",
                              filebase + "_optim.pyro",
                              filebase + "_params.pyro"])

            if train_loader is not None:
                # train_loader_file = save_dataloader_state(filebase=filebase,
                #                                           data_loader_state=train_loader.get_state(),
                #                                           name='train')
                torch.save(train_loader, filebase + "_train.loaderstate")
                file_list.append(filebase + "_train.loaderstate")
            if test_loader is not None:
                torch.save(test_loader, filebase + "_test.loaderstate")
                file_list.append(filebase + "_test.loaderstate")

            np.save(filebase + "_args.npy", args)
            file_list.append(filebase + "_args.npy")

            make_tarball(files=file_list, tarball_name=tarball_name)

        logger.info(f"Saved checkpoint as {os.path.abspath(tarball_name)}")
        return True

    except KeyboardInterrupt:
        logger.warning("Keyboard interrupt: will not save checkpoint")
        return False

    except Exception:
        logger.warning("Could not save checkpoint")
        logger.warning(traceback.format_exc())
        return False


def load_checkpoint(filebase: Optional[str],
                    tarball_name: str = consts.CHECKPOINT_FILE_NAME,
                    force_device: Optional[str] = None,
                    force_use_checkpoint: bool = False) -> Dict[str, Union["RemoveBackgroundPyroModel", pyro.optim.PyroOptim, "DataLoader", bool]]:
    """Load checkpoint and prepare a RemoveBackgroundPyroModel and optimizer."""

    out = load_from_checkpoint(
        filebase=filebase,
        tarball_name=tarball_name,
        to_load=["model", "optim", "param_store", "dataloader", "args", "random_state"],
        force_device=force_device,
        force_use_checkpoint=force_use_checkpoint,
    )
    out.update({"loaded": True})
    logger.info(f"Loaded partially-trained checkpoint from {tarball_name}")
    return out


def load_from_checkpoint(filebase: Optional[str],
                         tarball_name: str = consts.CHECKPOINT_FILE_NAME,
                         to_load: List[str] = ["model"],
                         force_device: Optional[str] = None,
                         force_use_checkpoint: bool = False) -> Dict:
    """Load specific files from a checkpoint tarball."""

    load_kwargs = {}
    if force_device is not None:
        load_kwargs.update({"map_location": torch.device(force_device)})

    # Work in a temporary directory.
    with tempfile.TemporaryDirectory() as tmp_dir:

        # Unpack the checkpoint tarball.
        logger.info(f"Attempting to unpack tarball \"{tarball_name}\" to {tmp_dir}")
        success = unpack_tarball(tarball_name=tarball_name, directory=tmp_dir)
        if success:
            unpacked_files = "\n".join(glob.glob(os.path.join(tmp_dir, "*")))
            logger.info("Successfully unpacked tarball to\n" f"{unpacked_files}")
        else:
            # no tarball loaded, so do not continue trying to load files
            raise FileNotFoundError

        # If posterior is present, do not require run hash to match: will pick up
        # after training and run estimation from existing posterior.
        # This smooths over a common failure mode in Terra/Cromwell.
        if force_use_checkpoint or (filebase is None):
            filebase = (glob.glob(os.path.join(tmp_dir, "*_model.torch"))[0]
                        .replace("_model.torch", ""))
            logger.info(f"Forcing use of checkpoint: {filebase}")
        else:
            filebase = os.path.join(tmp_dir, os.path.basename(filebase))

        # See if files have a hash matching input filebase.
        basename = os.path.basename(filebase)
        filebase = os.path.join(tmp_dir, basename)
        logger.debug(f"Looking for files with base name matching {basename}*")
        if not os.path.exists(filebase + "_model.torch"):
            logger.info("Workflow hash does not match that of checkpoint.")
            raise ValueError("Workflow hash does not match that of checkpoint.")

        out = {}

        # Load the saved model.
        if "model" in to_load:
            model_obj = torch.load(filebase + "_model.torch", **load_kwargs)
            logger.debug("Model loaded from " + filebase + "_model.torch")
            if force_device is not None:
                model_obj.use_cuda = (force_device != "cpu")
                model_obj.device = force_device
            out.update({"model": model_obj})

        # Load the saved optimizer.
        if "optim" in to_load:
            scheduler = torch.load(filebase + "_optim.torch", **load_kwargs)
            scheduler.load(filebase + "_optim.pyro", **load_kwargs)  # use PyroOptim method
            logger.debug("Optimizer loaded from " + filebase + "_optim.*")
            out.update({"optim": scheduler})

        # Load the pyro param store.
        if "param_store" in to_load:
            pyro.get_param_store().load(filebase + "_params.pyro", **load_kwargs)
            logger.debug("Pyro param store loaded from " + filebase + "_params.pyro")

        # Load dataloader states.
        if "dataloader" in to_load:
            train_loader = None
            test_loader = None
            if os.path.exists(filebase + "_train.loaderstate"):
                train_loader = torch.load(filebase + "_train.loaderstate")
                if force_device is not None:
                    train_loader.use_cuda = (force_device != "cpu")
                    train_loader.device = "cuda" if train_loader.use_cuda else "cpu"
            if os.path.exists(filebase + "_test.loaderstate"):
                test_loader = torch.load(filebase + "_test.loaderstate")
                if force_device is not None:
                    test_loader.use_cuda = (force_device != "cpu")
                    test_loader.device = "cuda" if test_loader.use_cuda else "cpu"
            out.update({"train_loader": train_loader, "test_loader": test_loader})

        # Load args.
        if "args" in to_load:
            args = np.load(filebase + "_args.npy", allow_pickle=True).item()
            out.update({"args": args})

        # Update states of random number generators across the board.
        if "random_state" in to_load:
            load_random_state(filebase=filebase)
            logger.debug("Loaded random state globally for python, numpy, pytorch, and cuda")

    return out


def attempt_load_checkpoint(filebase: str,
                            tarball_name: str = consts.CHECKPOINT_FILE_NAME,
                            force_device: Optional[str] = None,
                            force_use_checkpoint: bool = False) -> Dict[str, Union["RemoveBackgroundPyroModel", pyro.optim.PyroOptim, "DataLoader", bool]]:
    """Load checkpoint and prepare a RemoveBackgroundPyroModel and optimizer,
    or return the inputs if loading fails."""

    try:
        logger.debug("Attempting to load checkpoint from " + tarball_name)
        return load_checkpoint(filebase=filebase,
                               tarball_name=tarball_name,
                               force_device=force_device,
                               force_use_checkpoint=force_use_checkpoint)

    except FileNotFoundError:
        logger.debug("No tarball found")
        return {"loaded": False}

    except ValueError:
        logger.debug("Unpacked tarball files have a different workflow hash: will not load")
        return {"loaded": False}


def make_tarball(files: List[str], tarball_name: str) -> bool:
    """Tar and gzip a list of files into a checkpoint tarball.
    NOTE: Does not preserve directory structure.
    """
    with tarfile.open(tarball_name, "w:gz") as tar:
        for file in files:
            # without arcname, unpacking results in unpredictable file locations!
            tar.add(file, arcname=os.path.basename(file))
    return True


def unpack_tarball(tarball_name: str, directory: str) -> bool:
    """Untar a checkpoint tarball and put the files in directory."""
    if not os.path.exists(tarball_name):
        logger.info("No saved checkpoint.")
        return False

    try:
        with tarfile.open(tarball_name, "r:gz") as tar:
            tar.extractall(path=directory)
        return True

    except Exception:
        logger.warning("Failed to unpack specified tarball into files")
        return False


def pickle_and_save(obj, filename):
    """Pickle and save an object to a file."""
    with open(filename, "wb") as f:
        pickle.dump(obj, f)


def load_and_unpickle(filename):
    """Load and unpickle an object from a file."""
    with open(filename, "rb") as f:
        return pickle.load(f)
