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
"""Utility functions shared by the PyTorch engine APIs"""
from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

import deeplabcut.pose_estimation_pytorch.data.transforms as transforms
from deeplabcut.pose_estimation_pytorch.data.postprocessor import (
    build_bottom_up_postprocessor,
    build_detector_postprocessor,
    build_top_down_postprocessor,
)
from deeplabcut.pose_estimation_pytorch.data.preprocessor import (
    build_bottom_up_preprocessor,
    build_top_down_preprocessor,
)
from deeplabcut.pose_estimation_pytorch.models import DETECTORS, PoseModel
from deeplabcut.pose_estimation_pytorch.runners import (
    build_inference_runner,
    DetectorInferenceRunner,
    DynamicCropper,
    InferenceRunner,
    PoseInferenceRunner,
)
from deeplabcut.pose_estimation_pytorch.task import Task


@dataclass(frozen=True)
class Snapshot:
    """A snapshot saved during training"""

    best: bool
    epochs: int | None
    path: Path

    @staticmethod
    def from_path(path: Path) -> "Snapshot":
        best = "-best" in path.stem
        epochs = int(path.stem.split("-")[-1]) if not best else None
        return Snapshot(best=best, epochs=epochs, path=path)


def resolve_device(model_config: dict) -> str:
    """Determines which device to use to run a model

    If the device in the model configuration is "auto", the best available device is
    selected (a CUDA GPU if one is available, then Apple MPS for models that support
    it, otherwise the CPU).

    Args:
        model_config: the model configuration, with a "device" key

    Returns:
        the device on which the model should be run
    """
    device = model_config.get("device", "auto")
    net_type = model_config.get("net_type", "resnet_50")
    supports_mps = "resnet" in net_type or "hrnet" in net_type

    if device == "auto":
        if torch.cuda.is_available():
            return "cuda"
        elif supports_mps and torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    elif device == "mps" and not supports_mps:
        logging.warning(
            f"MPS is not supported for {net_type} models; running on the CPU instead."
        )
        return "cpu"
    elif device.startswith("cuda") and not torch.cuda.is_available():
        logging.warning(
            f"Device {device} was requested but CUDA is not available; using the CPU."
        )
        return "cpu"

    return device


def fix_seeds(seed: int) -> None:
    """Fixes the random seeds for reproducible training runs"""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def get_model_snapshots(model_folder: Path, task: Task) -> list[Snapshot]:
    """Returns the snapshots stored in a folder, sorted by the number of epochs they
    were trained for. If there is a "best" snapshot, it's the last one returned.

    Args:
        model_folder: the path to the folder containing the snapshots
        task: the task for which to get snapshots

    Returns:
        the snapshots stored in a folder, sorted by the number of epochs they were
        trained for. If there is a "best" snapshot, it's the last one returned.
    """
    snapshots = [
        Snapshot.from_path(file)
        for file in model_folder.iterdir()
        if file.suffix == ".pt" and file.stem.startswith(task.snapshot_prefix)
    ]
    best_snapshot = [s for s in snapshots if s.best]
    snapshots = sorted(
        [s for s in snapshots if not s.best], key=lambda s: s.epochs
    )
    if len(best_snapshot) > 0:
        snapshots.append(best_snapshot[0])
    return snapshots


def get_inference_runners(
    model_config: dict,
    snapshot_path: str | Path,
    max_individuals: int,
    num_bodyparts: int,
    num_unique_bodyparts: int,
    batch_size: int = 1,
    device: str | None = None,
    with_identity: bool = False,
    transform: transforms.Compose | None = None,
    detector_batch_size: int = 1,
    detector_path: str | Path | None = None,
    detector_transform: transforms.Compose | None = None,
    dynamic: DynamicCropper | None = None,
) -> tuple[PoseInferenceRunner, DetectorInferenceRunner | None]:
    """Builds the runners for pose estimation

    Args:
        model_config: the pytorch configuration file
        snapshot_path: the path of the snapshot from which to load the weights
        max_individuals: the maximum number of individuals per image
        num_bodyparts: the number of bodyparts predicted by the model
        num_unique_bodyparts: the number of unique_bodyparts predicted by the model
        batch_size: the batch size to use for the pose model.
        with_identity: whether the pose model has an identity head
        device: if defined, overwrites the device selection from the model config
        transform: the transform for pose estimation. if None, uses the transform
            defined in the config.
        detector_batch_size: the batch size to use for the detector
        detector_path: the path to the detector snapshot from which to load weights,
            for top-down models (if a detector runner is needed)
        detector_transform: the transform for object detection. if None, uses the
            transform defined in the config.
        dynamic: the DynamicCropper to use for video inference

    Returns:
        a runner for pose estimation
        a runner for detection, if detector_path is not None
    """
    pose_task = Task(model_config["method"])
    if device is None:
        device = resolve_device(model_config)

    if transform is None:
        transform = transforms.build_transforms(model_config["data"]["inference"])

    detector_runner = None
    if pose_task == Task.BOTTOM_UP:
        pose_preprocessor = build_bottom_up_preprocessor(
            color_mode=model_config["data"]["colormode"],
            transform=transform,
        )
        pose_postprocessor = build_bottom_up_postprocessor(
            max_individuals=max_individuals,
            num_bodyparts=num_bodyparts,
            num_unique_bodyparts=num_unique_bodyparts,
            with_identity=with_identity,
        )
    else:
        crop_cfg = model_config["data"]["inference"].get("top_down_crop", {})
        pose_preprocessor = build_top_down_preprocessor(
            color_mode=model_config["data"]["colormode"],
            transform=transform,
            top_down_crop_size=(crop_cfg.get("width", 256), crop_cfg.get("height", 256)),
        )
        pose_postprocessor = build_top_down_postprocessor(
            max_individuals=max_individuals,
            num_bodyparts=num_bodyparts,
            num_unique_bodyparts=num_unique_bodyparts,
        )

        if detector_path is not None:
            if detector_transform is None:
                detector_transform = transforms.build_transforms(
                    model_config["detector"]["data"]["inference"]
                )

            detector_config = model_config["detector"]["model"]
            if "pretrained" in detector_config:
                detector_config["pretrained"] = False

            detector_runner = build_inference_runner(
                task=Task.DETECT,
                model=DETECTORS.build(detector_config),
                device=device,
                snapshot_path=detector_path,
                batch_size=detector_batch_size,
                preprocessor=build_bottom_up_preprocessor(
                    color_mode=model_config["detector"]["data"]["colormode"],
                    transform=detector_transform,
                ),
                postprocessor=build_detector_postprocessor(
                    max_individuals=max_individuals,
                ),
            )

    pose_runner = build_inference_runner(
        task=pose_task,
        model=PoseModel.build(model_config["model"]),
        device=device,
        snapshot_path=snapshot_path,
        batch_size=batch_size,
        preprocessor=pose_preprocessor,
        postprocessor=pose_postprocessor,
        dynamic=dynamic,
    )
    return pose_runner, detector_runner


def build_predictions_dataframe(
    scorer: str,
    predictions: dict[str, dict[str, np.ndarray]],
    parameters,
    image_name_to_index=None,
) -> pd.DataFrame:
    """Builds a DLC-style predictions dataframe (scorer/individuals/bodyparts/coords)"""
    image_names = []
    prediction_data = []
    for image_name, image_predictions in predictions.items():
        image_data = image_predictions["bodyparts"][..., :3].reshape(-1)
        if "unique_bodyparts" in image_predictions:
            image_data = np.concatenate(
                [image_data, image_predictions["unique_bodyparts"][..., :3].reshape(-1)]
            )
        image_names.append(image_name)
        prediction_data.append(image_data)

    index = image_names
    if image_name_to_index is not None:
        index = pd.MultiIndex.from_tuples(
            [image_name_to_index(image_name) for image_name in image_names]
        )

    return pd.DataFrame(
        prediction_data,
        index=index,
        columns=parameters.get_dataframe_columns(scorer),
    )


def describe_device(device: str) -> str:
    """Human readable description of the device, used in the analysis logs"""
    if device.startswith("cuda"):
        index = torch.device(device).index or 0
        return f"{device} ({torch.cuda.get_device_name(index)})"
    return device
