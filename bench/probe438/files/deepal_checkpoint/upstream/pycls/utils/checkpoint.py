# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

"""Functions that handle saving and loading of checkpoints."""

import os

import pycls.utils.distributed as du
import torch
from pycls.core.config import cfg


# Common prefix for checkpoint file names
_NAME_PREFIX = "model_epoch_"
# Checkpoints directory name
_DIR_NAME = "checkpoints"


def get_checkpoint_dir(episode_dir):
    """Retrieves the location for storing checkpoints."""
    return os.path.join(episode_dir, _DIR_NAME)


def get_checkpoint(epoch, episode_dir):
    """Retrieves the path to a checkpoint file."""
    name = "{}{:04d}.pyth".format(_NAME_PREFIX, epoch)
    return os.path.join(get_checkpoint_dir(episode_dir), name)


def get_last_checkpoint(episode_dir):
    """Retrieves the most recent checkpoint (highest epoch number)."""
    checkpoint_dir = get_checkpoint_dir(episode_dir)
    # Checkpoint file names are in lexicographic order
    checkpoints = [f for f in os.listdir(checkpoint_dir) if _NAME_PREFIX in f]
    last_checkpoint_name = sorted(checkpoints)[-1]
    return os.path.join(checkpoint_dir, last_checkpoint_name)


def has_checkpoint(episode_dir):
    """Determines if there are checkpoints available."""
    checkpoint_dir = get_checkpoint_dir(episode_dir)
    if not os.path.exists(checkpoint_dir):
        return False
    return any(_NAME_PREFIX in f for f in os.listdir(checkpoint_dir))


def save_checkpoint(info, model_state, optimizer_state, epoch, cfg):
    """Saves a checkpoint."""
    # Save checkpoints only from the master process
    if not du.is_master_proc():
        return
    # Ensure that the checkpoint dir exists
    os.makedirs(get_checkpoint_dir(cfg.EPISODE_DIR), exist_ok=True)
    # Omit the DDP wrapper in the multi-gpu setting
    sd = model_state.module.state_dict() if cfg.NUM_GPUS > 1 else model_state.state_dict()
    # Record the state
    checkpoint = {
        "epoch": epoch,
        "model_state": sd,
        "optimizer_state": optimizer_state.state_dict(),
        "cfg": cfg.dump(),
    }
    # Write the checkpoint
    os.makedirs(os.path.join(cfg.EPISODE_DIR, _DIR_NAME), exist_ok=True)
    checkpoint_file = os.path.join(cfg.EPISODE_DIR, _DIR_NAME, "{}{}.pyth".format(info, epoch))
    torch.save(checkpoint, checkpoint_file)
    return checkpoint_file


def load_checkpoint(checkpoint_file, model, optimizer=None):
    """Loads the checkpoint from the given file."""
    assert os.path.exists(checkpoint_file), "Checkpoint '{}' not found".format(checkpoint_file)
    # Load the checkpoint on CPU to avoid GPU mem spike
    checkpoint = torch.load(checkpoint_file, map_location="cpu")
    # Account for the DDP wrapper in the multi-gpu setting
    ms = model.module if cfg.NUM_GPUS > 1 else model
    ms.load_state_dict(checkpoint["model_state"])
    # Load the optimizer state (commonly not done when fine-tuning)
    if optimizer:
        optimizer.load_state_dict(checkpoint["optimizer_state"])
    return model


def load_best_for_sampling(checkpoint_file, model):
    """Loads the best checkpoint of the episode straight onto the sampling device.

    The sampling stage runs single-process, so the tensors can be materialised on the
    current GPU directly instead of going through host memory.
    """
    cur_device = torch.cuda.current_device()
    checkpoint = torch.load(checkpoint_file, map_location=lambda storage, loc: storage.cuda(cur_device))
    state = checkpoint["model_state"]
    # strip a stray DDP prefix if the episode was trained on several GPUs
    state = {k[len("module."):] if k.startswith("module.") else k: v for k, v in state.items()}
    model.load_state_dict(state)
    return model, checkpoint["epoch"]
