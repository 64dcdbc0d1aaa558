#
# DeepLabCut Toolbox (deeplabcut.org)
# © A. & M.W. Mathis Labs
# https://github.com/DeepLabCut/DeepLabCut
#
# Please see AUTHORS for contributors.
# https://github.com/DeepLabCut/DeepLabCut/blob/main/AUTHORS
#
# Licensed under GNU Lesser General Public License v3.0
#
"""Training API for the PyTorch engine.

The entry point used by ``deeplabcut.train_network(config, shuffle=1, gputouse=0)``
when the project's engine is ``pytorch`` lives here. It reads the
``pytorch_config.yaml`` for a shuffle, builds the model, the data loaders and the
runner, and launches training for the pose model (and, for top-down models, the
detector first).
"""
from __future__ import annotations

import copy
import logging
import os
from pathlib import Path

import torch
from torch.utils.data import DataLoader

import deeplabcut.core.config as config_utils
import deeplabcut.pose_estimation_pytorch.utils as utils
from deeplabcut.core.engine import Engine
from deeplabcut.pose_estimation_pytorch.apis.utils import (
    get_model_snapshots,
    resolve_device,
)
from deeplabcut.pose_estimation_pytorch.data import (
    COLLATE_FUNCTIONS,
    build_transforms,
    DLCLoader,
    Loader,
)
from deeplabcut.pose_estimation_pytorch.models import DETECTORS, PoseModel
from deeplabcut.pose_estimation_pytorch.runners import build_training_runner
from deeplabcut.pose_estimation_pytorch.runners.logger import (
    destroy_file_logging,
    LOGGER,
    setup_file_logging,
)
from deeplabcut.pose_estimation_pytorch.task import Task


def train(
    loader: Loader,
    run_config: dict,
    task: Task,
    device: str | None = "cuda",
    gpus: list[int] | None = None,
    logger_config: dict | None = None,
    snapshot_path: str | Path | None = None,
    transform: None = None,
    inference_transform: None = None,
    max_snapshots_to_keep: int | None = None,
) -> None:
    """Builds a model from a configuration and trains it

    Args:
        loader: the loader containing the data to train on/validate with
        run_config: the model and run configuration
        task: the task to train the model for
        device: the torch device to train on (such as "cpu", "cuda", "mps")
        gpus: the list of GPU indices to use for multi-GPU training
        logger_config: the configuration of a logger to use
        snapshot_path: if continuing to train a model, the path to the snapshot to
            resume training from
        transform: if defined, overwrites the transform defined in the model config
        inference_transform: if defined, overwrites the inference transform defined
            in the model config
        max_snapshots_to_keep: the maximum number of snapshots to store for each model
    """
    if task == Task.DETECT:
        model = DETECTORS.build(run_config["model"])
    else:
        model = PoseModel.build(run_config["model"])

    if device is None or device == "auto":
        device = resolve_device(run_config)

    logging.info(f"Training with device {device} (gpus={gpus})")
    model.to(device)  # Move model before giving its parameters to the optimizer

    runner = build_training_runner(
        runner_config=run_config["runner"],
        model_folder=loader.model_folder,
        task=task,
        model=model,
        device=device,
        gpus=gpus,
        snapshot_path=snapshot_path,
        logger=None,
    )

    if transform is None:
        logging.info("No transform specified... using default")
        transform = build_transforms(run_config["data"]["train"])

    if inference_transform is None:
        inference_transform = build_transforms(run_config["data"]["inference"])

    train_dataset = loader.create_dataset(transform=transform, mode="train", task=task)
    valid_dataset = loader.create_dataset(
        transform=inference_transform, mode="test", task=task
    )

    collate_fn = None
    if collate_fn_cfg := run_config["data"]["train"].get("collate"):
        collate_fn = COLLATE_FUNCTIONS.build(collate_fn_cfg)
        logging.info(f"Using custom collate function: {collate_fn_cfg}")

    batch_size = run_config["train_settings"]["batch_size"]
    num_workers = run_config["train_settings"]["dataloader_workers"]
    pin_memory = run_config["train_settings"]["dataloader_pin_memory"]
    train_dataloader = DataLoader(
        train_dataset,
        batch_size=batch_size,
        shuffle=True,
        num_workers=num_workers,
        collate_fn=collate_fn,
        pin_memory=pin_memory,
    )
    valid_dataloader = DataLoader(
        valid_dataset,
        batch_size=1,
        shuffle=False,
        num_workers=num_workers,
        pin_memory=True,
    )

    if len(train_dataset) < batch_size:
        logging.warning(
            f"The batch size ({batch_size}) is larger than the number of training "
            f"images ({len(train_dataset)}). You may want to reduce the batch size."
        )

    runner.fit(
        train_dataloader,
        valid_dataloader,
        epochs=run_config["train_settings"]["epochs"],
        display_iters=run_config["train_settings"]["display_iters"],
    )


def train_network(
    config: str | Path,
    shuffle: int = 1,
    trainingsetindex: int = 0,
    modelprefix: str = "",
    device: str | None = None,
    snapshot_path: str | Path | None = None,
    detector_path: str | Path | None = None,
    batch_size: int | None = None,
    epochs: int | None = None,
    save_epochs: int | None = None,
    detector_batch_size: int | None = None,
    detector_epochs: int | None = None,
    detector_save_epochs: int | None = None,
    display_iters: int | None = None,
    max_snapshots_to_keep: int | None = None,
    pose_threshold: float | None = 0.1,
    gputouse: int | None = None,
    **kwargs,
) -> None:
    """Trains a network for a project

    Args:
        config : path to the yaml config file of the project
        shuffle : index of the shuffle we want to train on
        trainingsetindex : training set index
        modelprefix: directory containing the deeplabcut configuration files to use
            to train the network (and where snapshots will be saved). By default, they
             are assumed to exist in the project folder.
        device: the torch device to train on (such as "cpu", "cuda", "mps")
        snapshot_path: if resuming training, the snapshot from which to resume
        detector_path: if resuming training of a top-down model, used to specify the
            detector snapshot from which to resume
        batch_size: overrides the batch size to train with
        epochs: overrides the maximum number of epochs to train the model for
        save_epochs: overrides the number of epochs between each snapshot save
        detector_batch_size: Only for top-down models. Overrides the batch size with
            which to train the detector.
        detector_epochs: Only for top-down models. Overrides the maximum number of
            epochs to train the model for. Setting to 0 means the detector will not be
            trained.
        detector_save_epochs: Only for top-down models. Overrides the number of epochs
            between each snapshot of the detector is saved.
        display_iters: overrides the number of iterations between each log of the loss
            within an epoch
        max_snapshots_to_keep: the maximum number of snapshots to save for each model
        pose_threshold: used for memory-replay. pseudo-predictions that are below this
            are discarded for memory-replay
        gputouse: index of the GPU to train on. Kept for compatibility with the
            TensorFlow engine; sets CUDA_VISIBLE_DEVICES for this process.
        **kwargs : could be any entry of the pytorch_config dictionary. Examples are
            to see the full list see the pytorch_cfg.yaml file in your project folder
    """
    if gputouse is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(gputouse)
        # once the env var is set, the selected GPU is always index 0
        if device is None:
            device = "cuda:0"

    loader = DLCLoader(
        config=config,
        trainset_index=trainingsetindex,
        shuffle=shuffle,
        modelprefix=modelprefix,
    )

    if batch_size is not None:
        loader.model_cfg["train_settings"]["batch_size"] = batch_size
    if epochs is not None:
        loader.model_cfg["train_settings"]["epochs"] = epochs
    if save_epochs is not None:
        loader.model_cfg["runner"]["snapshots"]["save_epochs"] = save_epochs
    if display_iters is not None:
        loader.model_cfg["train_settings"]["display_iters"] = display_iters
    if max_snapshots_to_keep is not None:
        loader.model_cfg["runner"]["snapshots"]["max_snapshots"] = max_snapshots_to_keep

    # merge any remaining kwargs into the configuration
    loader.update_model_cfg(kwargs)
    setup_file_logging(loader.model_folder / "train.txt")

    if device is not None:
        loader.model_cfg["device"] = device
    device = resolve_device(loader.model_cfg)
    gpus = loader.model_cfg["runner"].get("gpus")

    pose_task = Task(loader.model_cfg["method"])
    if pose_task == Task.TOP_DOWN:
        logger_config = None
        if loader.model_cfg.get("logger"):
            logger_config = copy.deepcopy(loader.model_cfg["logger"])
            logger_config["run_name"] += "-detector"

        detector_cfg = loader.model_cfg["detector"]
        if detector_batch_size is not None:
            detector_cfg["train_settings"]["batch_size"] = detector_batch_size
        if detector_epochs is not None:
            detector_cfg["train_settings"]["epochs"] = detector_epochs
        if detector_save_epochs is not None:
            detector_cfg["runner"]["snapshots"]["save_epochs"] = detector_save_epochs

        if detector_cfg["train_settings"]["epochs"] > 0:
            train(
                loader=loader,
                run_config=detector_cfg,
                task=Task.DETECT,
                device=device,
                gpus=gpus,
                logger_config=logger_config,
                snapshot_path=detector_path,
            )
            # release the detector's activations before the pose model starts
            torch.cuda.empty_cache()

    if loader.model_cfg["train_settings"]["epochs"] > 0:
        train(
            loader=loader,
            run_config=loader.model_cfg,
            task=pose_task,
            device=device,
            gpus=gpus,
            logger_config=loader.model_cfg.get("logger"),
            snapshot_path=snapshot_path,
            max_snapshots_to_keep=max_snapshots_to_keep,
        )

    destroy_file_logging()
    snapshots = get_model_snapshots(loader.model_folder, pose_task)
    if len(snapshots) > 0:
        LOGGER.info(f"Training finished. Best snapshot: {snapshots[-1].path.name}")
