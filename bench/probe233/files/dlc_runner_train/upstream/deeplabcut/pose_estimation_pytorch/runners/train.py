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
from __future__ import annotations

import logging
import time
from abc import ABCMeta, abstractmethod
from collections import defaultdict
from pathlib import Path
from typing import Any, Generic

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

import deeplabcut.pose_estimation_pytorch.runners.schedulers as schedulers
from deeplabcut.pose_estimation_pytorch.metrics import compute_metrics
from deeplabcut.pose_estimation_pytorch.models import PoseModel
from deeplabcut.pose_estimation_pytorch.models.detectors import BaseDetector
from deeplabcut.pose_estimation_pytorch.runners.base import ModelType, Runner
from deeplabcut.pose_estimation_pytorch.runners.logger import (
    BaseLogger,
    CSVLogger,
    ImageLoggerMixin,
)
from deeplabcut.pose_estimation_pytorch.runners.snapshots import TorchSnapshotManager
from deeplabcut.pose_estimation_pytorch.task import Task


class TrainingRunner(Runner, Generic[ModelType], metaclass=ABCMeta):
    """Runner base class

    A runner takes a model and runs actions on it, such as training or inference
    """

    def __init__(
        self,
        model: ModelType,
        optimizer: torch.optim.Optimizer,
        snapshot_manager: TorchSnapshotManager,
        device: str = "cpu",
        gpus: list[int] | None = None,
        eval_interval: int = 1,
        snapshot_path: str | Path | None = None,
        scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
        load_scheduler_state_dict: bool = True,
        logger: BaseLogger | None = None,
        log_filename: str = "learning_stats.csv",
    ):
        """
        Args:
            model: the model to run actions on
            optimizer: the optimizer to use when fitting the model
            snapshot_manager: the module to use to manage snapshots
            device: the device to use (e.g. {'cpu', 'cuda:0', 'mps'})
            gpus: the list of GPU indices to use for multi-GPU training
            eval_interval: how often evaluation is run on the test set (in epochs)
            snapshot_path: if defined, the path of a snapshot from which to load
                pretrained weights
            scheduler: scheduler for adjusting the lr of the optimizer
            load_scheduler_state_dict: whether to load the scheduler state dict
            logger: logger to monitor training (e.g WandB logger)
            log_filename: name of the file in which to store training stats
        """
        super().__init__(model=model, device=device, snapshot_path=snapshot_path)
        self.eval_interval = eval_interval
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.snapshot_manager = snapshot_manager
        self.history: dict[str, list] = dict(train_loss=[], eval_loss=[])
        self.logger = logger
        self.current_epoch = 0
        self.starting_epoch = 0
        self._metadata = dict(metrics=dict(), losses=dict())
        self._print_valid_loss = True
        self._gpus = gpus
        self._data_parallel = gpus is not None and len(gpus) > 1

        self.csv_logger = CSVLogger(
            train_folder=snapshot_manager.model_folder,
            log_filename=log_filename,
        )

        if self.snapshot_path:
            snapshot = self.load_snapshot(self.snapshot_path, self.device, self.model)
            self.starting_epoch = snapshot.get("metadata", {}).get("epoch", 0)

            if "optimizer" in snapshot:
                self.optimizer.load_state_dict(snapshot["optimizer"])

            self._load_scheduler_state_dict(load_scheduler_state_dict, snapshot)

        # place the model on the requested device(s)
        if self._data_parallel:
            self.model = nn.DataParallel(self.model, device_ids=gpus)
            self.device = f"cuda:{gpus[0]}"
        self.model.to(self.device)

    @abstractmethod
    def step(
        self, batch: dict[str, Any], mode: str = "train"
    ) -> dict[str, torch.Tensor]:
        """Perform a single epoch gradient update or validation step"""

    def state_dict(self) -> dict[str, Any]:
        """Returns: the state dict for the runner"""
        model = self.model
        if self._data_parallel:
            model = self.model.module

        state_dict_ = dict(
            model=model.state_dict(),
            optimizer=self.optimizer.state_dict(),
            metadata=self._metadata,
        )
        if self.scheduler is not None:
            state_dict_["scheduler"] = self.scheduler.state_dict()
        return state_dict_

    def fit(
        self,
        train_loader: DataLoader,
        valid_loader: DataLoader,
        epochs: int,
        display_iters: int,
    ) -> None:
        """Train model for the specified number of steps.

        Args:
            train_loader: Data loader, which is an iterator over train instances.
                Each batch contains image tensor and heat maps tensor input samples.
            valid_loader: Data loader used for validation of the model.
            epochs: The number of training epochs.
            display_iters: The number of iterations between each loss print

        Example:
           runner = Runner(model, optimizer, cfg, device='cuda')
           runner.fit(train_loader, valid_loader, "example/models" epochs=50)
        """
        self.model.to(self.device)
        if isinstance(self, PoseTrainingRunner):
            self.model.train()

        # continuing to train a model: either total epochs or extra epochs
        if self.starting_epoch > 0:
            epochs = self.starting_epoch + epochs

        for e in range(self.starting_epoch + 1, epochs + 1):
            self.current_epoch = e
            self._metadata["epoch"] = e
            start = time.time()
            train_loss = self._epoch(
                train_loader, mode="train", epoch=e, display_iters=display_iters
            )
            if self.scheduler:
                self.scheduler.step()

            lr = self.optimizer.param_groups[0]["lr"]
            msg = f"Epoch {e}/{epochs} (lr={lr}), train loss {float(train_loss):.5f}"
            if e % self.eval_interval == 0:
                with torch.no_grad():
                    valid_loss = self._epoch(
                        valid_loader, mode="eval", epoch=e, display_iters=display_iters
                    )
                if self._print_valid_loss:
                    msg += f", valid loss {float(valid_loss):.5f}"

            self.snapshot_manager.update(e, self.state_dict(), last=(e == epochs))
            duration = time.time() - start
            msg += f" ({duration:.1f}s)"

            if str(self.device).startswith("cuda"):
                peak_gb = torch.cuda.max_memory_allocated(self.device) / (1024**3)
                msg += f", peak GPU memory {peak_gb:.2f} GB"
                torch.cuda.reset_peak_memory_stats(self.device)
            logging.info(msg)

            epoch_metrics = self._metadata.get("metrics")
            if self.logger is not None:
                self.logger.log({"lr": lr, **(epoch_metrics or {})}, step=e)
            self.csv_logger.log(
                {"epoch": e, "lr": lr, "train_loss": float(train_loss), **epoch_metrics}
            )

    def _epoch(
        self,
        loader: torch.utils.data.DataLoader,
        mode: str = "train",
        epoch: int = 1,
        display_iters: int = 500,
    ) -> float:
        """Facilitates training over an epoch. Returns the loss over the batches.

        Args:
            loader: Data loader, which is an iterator over instances.
                Each batch contains image tensor and heat maps tensor input samples.
            mode: "train" or "eval"
            epoch: the epoch number
            display_iters: the number of iterations between each loss print

        Raises:
            ValueError: "Runner must be in train or eval mode, but {mode} was found."

        Returns:
            epoch_loss: Average of the loss over the batches.
        """
        if mode == "train":
            self.model.train()
        elif mode == "eval" or mode == "inference":
            self.model.eval()
        else:
            raise ValueError(f"Runner must be in train or eval mode, but {mode} found")

        epoch_loss = []
        loss_metrics = defaultdict(list)
        for i, batch in enumerate(loader):
            losses_dict = self.step(batch, mode)
            epoch_loss.append(losses_dict["total_loss"])

            for key in losses_dict.keys():
                loss_metrics[key].append(losses_dict[key])

            if (i + 1) % display_iters == 0:
                logging.info(
                    f"Number of iterations: {i + 1}, "
                    f"loss: {losses_dict['total_loss']:.5f}, "
                    f"lr: {self.optimizer.param_groups[0]['lr']}"
                )

        perf_metrics = None
        if mode == "eval":
            perf_metrics = self._compute_epoch_metrics()
            self._metadata["metrics"] = perf_metrics
            self._epoch_predictions = {}
            self._epoch_ground_truth = {}

        epoch_loss = np.mean(epoch_loss).item()
        self.history[f"{mode}_loss"].append(epoch_loss)

        metrics = {f"{mode}.{k}": float(np.nanmean(v)) for k, v in loss_metrics.items()}
        self._metadata["losses"].update(metrics)
        if perf_metrics is not None:
            metrics.update(perf_metrics)
        return epoch_loss

    def _compute_epoch_metrics(self) -> dict[str, float]:
        return {}

    def _load_scheduler_state_dict(self, load_state_dict: bool, snapshot: dict):
        if self.scheduler is None:
            return
        if load_state_dict and "scheduler" in snapshot:
            self.scheduler.load_state_dict(snapshot["scheduler"])
        else:
            schedulers.load_scheduler_state(self.scheduler, self.starting_epoch)


class PoseTrainingRunner(TrainingRunner[PoseModel]):
    """Runner to train pose estimation models"""

    def __init__(self, model: PoseModel, optimizer: torch.optim.Optimizer, **kwargs):
        super().__init__(model, optimizer, **kwargs)
        self._epoch_ground_truth = {}
        self._epoch_predictions = {}

    def step(
        self, batch: dict[str, Any], mode: str = "train"
    ) -> dict[str, torch.Tensor]:
        """Perform a single epoch gradient update or validation step.

        Args:
            batch: Tuple of input image(s) and target(s) for train or valid single step.
            mode: `train` or `eval`. Defaults to "train".

        Returns:
            dict: {
                "total_loss": aggregate_loss,
                "aux_loss_1": loss_value,
                ...,
            }
        """
        if mode == "train":
            self.optimizer.zero_grad()

        inputs = batch["image"]
        inputs = inputs.to(self.device, non_blocking=True).float()
        if "cond_keypoints" in batch["context"]:
            cond_kpts = batch["context"]["cond_keypoints"]
            outputs = self.model(inputs, cond_kpts=cond_kpts)
        else:
            outputs = self.model(inputs)

        if self._data_parallel:
            underlying_model = self.model.module
        else:
            underlying_model = self.model

        target = underlying_model.get_target(outputs, batch["annotations"])
        losses_dict = underlying_model.get_loss(outputs, target)
        if mode == "train":
            losses_dict["total_loss"].backward()
            self.optimizer.step()

        if mode == "eval":
            predictions = {
                name: {k: v.detach().cpu().numpy() for k, v in pred.items()}
                for name, pred in underlying_model.get_predictions(outputs).items()
            }
            ground_truth = batch["annotations"]["keypoints"]
            for b, image_path in enumerate(batch["path"]):
                self._epoch_predictions[image_path] = {
                    k: v[b] for k, v in predictions["bodypart"].items()
                }
                self._epoch_ground_truth[image_path] = ground_truth[b].cpu().numpy()

        return {k: v.detach().cpu().numpy() for k, v in losses_dict.items()}

    def _compute_epoch_metrics(self) -> dict[str, float]:
        """Computes the metrics using the data accumulated during an epoch"""
        num_animals = max(len(v) for v in self._epoch_ground_truth.values())
        poses = {
            image: pred["poses"] for image, pred in self._epoch_predictions.items()
        }
        return compute_metrics(
            self._epoch_ground_truth,
            poses,
            single_animal=num_animals == 1,
            pcutoff=0.6,
        )


class DetectorTrainingRunner(TrainingRunner[BaseDetector]):
    """Runner to train object detection models"""

    def __init__(self, model: BaseDetector, optimizer: torch.optim.Optimizer, **kwargs):
        super().__init__(model, optimizer, **kwargs)
        self._print_valid_loss = False
        self._epoch_ground_truth = {}
        self._epoch_predictions = {}

    def step(
        self, batch: dict[str, Any], mode: str = "train"
    ) -> dict[str, torch.Tensor]:
        """Perform a single epoch gradient update or validation step."""
        if mode == "train":
            self.model.train()
            self.optimizer.zero_grad()
        else:
            self.model.eval()

        images = batch["image"]
        images = [image.to(self.device) for image in images]
        target = self.get_targets(batch["annotations"])
        for item in target:
            for key in item:
                if item[key] is not None:
                    item[key] = item[key].cuda()

        losses, predictions = self.model(images, target)
        if mode == "train":
            losses["total_loss"] = sum(loss_part for loss_part in losses.values())
            losses["total_loss"].backward()
            self.optimizer.step()
        else:
            losses["total_loss"] = torch.zeros(1)
            for path, pred, gt in zip(batch["path"], predictions, target):
                self._epoch_predictions[path] = {
                    "bboxes": pred["boxes"].detach().cpu().numpy(),
                    "scores": pred["scores"].detach().cpu().numpy(),
                }
                self._epoch_ground_truth[path] = gt["boxes"].detach().cpu().numpy()

        return {k: v.detach().cpu().numpy() for k, v in losses.items()}

    @staticmethod
    def get_targets(annotations: dict) -> list[dict[str, torch.Tensor]]:
        return [
            {
                "area": item["area"],
                "labels": item["labels"],
                "boxes": item["boxes"],
                "is_crowd": item["is_crowd"],
            }
            for item in annotations["detection"]
        ]


def build_training_runner(
    runner_config: dict,
    model_folder: Path,
    task: Task,
    model: nn.Module,
    device: str,
    gpus: list[int] | None = None,
    snapshot_path: str | Path | None = None,
    logger: BaseLogger | None = None,
) -> TrainingRunner:
    """Build a runner object according to a pytorch configuration file"""
    optimizer = build_optimizer(model, runner_config["optimizer"])
    scheduler = schedulers.build_scheduler(runner_config.get("scheduler"), optimizer)
    snapshot_manager = TorchSnapshotManager(
        task.snapshot_prefix,
        model_folder,
        key_metric=runner_config.get("key_metric"),
        key_metric_asc=runner_config.get("key_metric_asc"),
        max_snapshots=runner_config["snapshots"]["max_snapshots"],
        save_epochs=runner_config["snapshots"]["save_epochs"],
        save_optimizer_state=runner_config["snapshots"]["save_optimizer_state"],
    )
    kwargs = dict(
        model=model,
        optimizer=optimizer,
        snapshot_manager=snapshot_manager,
        device=device,
        gpus=gpus,
        eval_interval=runner_config.get("eval_interval"),
        snapshot_path=snapshot_path,
        scheduler=scheduler,
        logger=logger,
    )
    if task == Task.DETECT:
        return DetectorTrainingRunner(**kwargs)
    return PoseTrainingRunner(**kwargs)


def build_optimizer(model: nn.Module, optimizer_cfg: dict) -> torch.optim.Optimizer:
    """Builds an optimizer from its configuration, e.g. {type: AdamW, params: {lr}}"""
    get_optimizer = getattr(torch.optim, optimizer_cfg["type"])
    return get_optimizer(params=model.parameters(), **optimizer_cfg["params"])
