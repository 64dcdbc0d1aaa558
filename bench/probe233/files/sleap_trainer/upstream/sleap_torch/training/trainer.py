"""Training loop for SLEAP models ported to PyTorch.

This mirrors the structure of ``sleap.nn.training`` from the TensorFlow code base:
a ``Trainer`` is built from a ``TrainingJobConfig`` (model, data, optimization and
outputs sections), sets up the pipelines, then fits the model with the same
callbacks SLEAP users know (plateau LR reduction, early stopping, best-model
checkpointing, visualization of predictions on validation frames).

Multi-GPU training is done with DistributedDataParallel; launch it with
``torchrun --nproc_per_node=N -m sleap_torch.training.trainer config.json``.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

from sleap_torch.config import TrainingJobConfig, load_config
from sleap_torch.data.pipelines import build_pipeline, LabelsDataset
from sleap_torch.models import build_model
from sleap_torch.training.losses import build_loss
from sleap_torch.training.visualization import VisualizerCallback

logger = logging.getLogger(__name__)


@dataclass
class TrainerState:
    epoch: int = 0
    global_step: int = 0
    best_val_loss: float = float("inf")
    epochs_without_improvement: int = 0
    history: dict = field(default_factory=lambda: {"loss": [], "val_loss": [], "lr": []})


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


class Trainer:
    """Fits a SLEAP model (single instance, centroid, centered instance, bottom-up)."""

    def __init__(self, config: TrainingJobConfig):
        self.config = config
        self.state = TrainerState()
        self.is_distributed = "LOCAL_RANK" in os.environ
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        self.world_size = int(os.environ.get("WORLD_SIZE", 1))
        self.is_main_process = self.local_rank == 0 and int(os.environ.get("RANK", 0)) == 0

        self._setup_device()
        seed_everything(config.optimization.seed + self.local_rank)

        # cuDNN picks the fastest convolution algorithms for our fixed input size
        torch.backends.cudnn.benchmark = True

        self.use_amp = bool(config.optimization.mixed_precision)
        self.run_path = Path(config.outputs.runs_folder) / config.outputs.run_name
        if self.is_main_process:
            self.run_path.mkdir(parents=True, exist_ok=True)

    # ------------------------------------------------------------------ setup
    def _setup_device(self) -> None:
        if self.is_distributed:
            os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
            torch.cuda.set_device(self.local_rank)
            dist.init_process_group(backend="nccl", init_method="env://")
            self.device = torch.device("cuda", self.local_rank)
            return

        requested = self.config.trainer.device
        if requested == "auto":
            self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        else:
            self.device = torch.device(requested)
        logger.info(f"Training on {self.device}")

    def _setup_data(self) -> None:
        data_cfg = self.config.data
        self.train_dataset: LabelsDataset = build_pipeline(
            data_cfg, self.config.model, split="train"
        )
        self.val_dataset: LabelsDataset = build_pipeline(
            data_cfg, self.config.model, split="val"
        )

        self.train_sampler = None
        if self.is_distributed:
            self.train_sampler = DistributedSampler(self.train_dataset, shuffle=True)

        # page-locked host buffers only help when copying to a GPU
        pin_memory = torch.cuda.is_available()
        batch_size = self.config.optimization.batch_size
        self.train_loader = DataLoader(
            self.train_dataset,
            batch_size=batch_size,
            shuffle=self.train_sampler is None,
            sampler=self.train_sampler,
            num_workers=data_cfg.num_workers,
            pin_memory=pin_memory,
            drop_last=True,
            persistent_workers=data_cfg.num_workers > 0,
        )
        self.val_loader = DataLoader(
            self.val_dataset,
            batch_size=batch_size,
            shuffle=False,
            num_workers=data_cfg.num_workers,
            pin_memory=pin_memory,
        )
        logger.info(
            f"Training set: {len(self.train_dataset)} examples, "
            f"validation set: {len(self.val_dataset)} examples"
        )

    def _setup_model(self) -> None:
        self.model = build_model(self.config.model).to(self.device)
        if self.config.model.pretrained_weights:
            state = torch.load(self.config.model.pretrained_weights, map_location="cpu")
            missing, unexpected = self.model.load_state_dict(state, strict=False)
            logger.info(f"Loaded pretrained weights (missing={len(missing)}, unexpected={len(unexpected)})")

        if self.is_distributed:
            self.model = nn.SyncBatchNorm.convert_sync_batchnorm(self.model)
            self.model = DistributedDataParallel(
                self.model,
                device_ids=[self.local_rank],
                output_device=self.local_rank,
                find_unused_parameters=False,
            )

        self.loss_fn = build_loss(self.config.model)

    def _setup_optimization(self) -> None:
        opt_cfg = self.config.optimization
        params = [p for p in self.model.parameters() if p.requires_grad]
        if opt_cfg.optimizer == "adam":
            self.optimizer = torch.optim.Adam(
                params, lr=opt_cfg.initial_learning_rate, amsgrad=opt_cfg.amsgrad
            )
        elif opt_cfg.optimizer == "adamw":
            self.optimizer = torch.optim.AdamW(
                params,
                lr=opt_cfg.initial_learning_rate,
                weight_decay=opt_cfg.weight_decay,
                fused=torch.cuda.is_available(),
            )
        else:
            raise ValueError(f"Unknown optimizer: {opt_cfg.optimizer}")

        plateau = opt_cfg.learning_rate_schedule
        self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            self.optimizer,
            mode="min",
            factor=plateau.reduction_factor,
            patience=plateau.plateau_patience,
            threshold=plateau.plateau_min_delta,
            threshold_mode="abs",
            cooldown=plateau.plateau_cooldown,
            min_lr=plateau.min_learning_rate,
        )
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)

    def setup(self) -> None:
        self._setup_data()
        self._setup_model()
        self._setup_optimization()
        self.visualizer = None
        if self.is_main_process and self.config.outputs.save_visualizations:
            self.visualizer = VisualizerCallback(
                self.val_dataset, self.run_path / "viz", every_n_epochs=1
            )

    # --------------------------------------------------------------- training
    def _train_epoch(self) -> float:
        self.model.train()
        if self.train_sampler is not None:
            self.train_sampler.set_epoch(self.state.epoch)

        losses = []
        steps_per_epoch = self.config.optimization.batches_per_epoch or len(self.train_loader)
        for step, batch in enumerate(self.train_loader):
            if step >= steps_per_epoch:
                break
            images = batch["image"].to(self.device, non_blocking=True)
            targets = batch["confidence_maps"].to(self.device, non_blocking=True)
            pafs = batch.get("part_affinity_fields")
            if pafs is not None:
                pafs = pafs.to(self.device, non_blocking=True)

            self.optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=self.use_amp):
                outputs = self.model(images)
                loss = self.loss_fn(outputs, targets, pafs)

            self.scaler.scale(loss).backward()
            if self.config.optimization.gradient_clip_norm:
                self.scaler.unscale_(self.optimizer)
                nn.utils.clip_grad_norm_(
                    self.model.parameters(), self.config.optimization.gradient_clip_norm
                )
            self.scaler.step(self.optimizer)
            self.scaler.update()

            losses.append(loss.detach())
            self.state.global_step += 1

        epoch_loss = torch.stack(losses).mean()
        if self.is_distributed:
            dist.all_reduce(epoch_loss, op=dist.ReduceOp.SUM)
            epoch_loss /= self.world_size
        return epoch_loss.item()

    @torch.no_grad()
    def _validate(self) -> float:
        self.model.eval()
        losses = []
        for batch in self.val_loader:
            images = batch["image"].to(self.device, non_blocking=True)
            targets = batch["confidence_maps"].to(self.device, non_blocking=True)
            pafs = batch.get("part_affinity_fields")
            if pafs is not None:
                pafs = pafs.to(self.device, non_blocking=True)
            with torch.autocast(device_type=self.device.type, enabled=self.use_amp):
                outputs = self.model(images)
                losses.append(self.loss_fn(outputs, targets, pafs))
        val_loss = torch.stack(losses).mean()
        if self.is_distributed:
            dist.all_reduce(val_loss, op=dist.ReduceOp.SUM)
            val_loss /= self.world_size
        return val_loss.item()

    def _save_checkpoint(self, name: str) -> None:
        if not self.is_main_process:
            return
        model = self.model.module if isinstance(self.model, DistributedDataParallel) else self.model
        torch.save(
            {
                "model_state_dict": model.state_dict(),
                "optimizer_state_dict": self.optimizer.state_dict(),
                "scaler_state_dict": self.scaler.state_dict(),
                "epoch": self.state.epoch,
                "config": self.config.to_dict(),
            },
            self.run_path / name,
        )

    def _log_epoch(self, loss: float, val_loss: float, elapsed: float) -> None:
        lr = self.optimizer.param_groups[0]["lr"]
        self.state.history["loss"].append(loss)
        self.state.history["val_loss"].append(val_loss)
        self.state.history["lr"].append(lr)
        msg = (
            f"Epoch {self.state.epoch + 1}/{self.config.optimization.epochs} "
            f"- {elapsed:.0f}s - loss: {loss:.5f} - val_loss: {val_loss:.5f} - lr: {lr:.2e}"
        )
        if self.device.type == "cuda":
            msg += f" - gpu_mem: {torch.cuda.max_memory_allocated(self.device) / 1e9:.2f}GB"
        logger.info(msg)
        with open(self.run_path / "training_log.csv", "a") as f:
            f.write(f"{self.state.epoch},{loss},{val_loss},{lr}\n")

    def train(self) -> None:
        self.setup()
        opt_cfg = self.config.optimization
        for epoch in range(self.state.epoch, opt_cfg.epochs):
            self.state.epoch = epoch
            t0 = time.time()
            loss = self._train_epoch()
            val_loss = self._validate()
            self.scheduler.step(val_loss)

            if self.is_main_process:
                self._log_epoch(loss, val_loss, time.time() - t0)
                self._save_checkpoint("latest_model.pt")
                if val_loss < self.state.best_val_loss - opt_cfg.early_stopping.plateau_min_delta:
                    self.state.best_val_loss = val_loss
                    self.state.epochs_without_improvement = 0
                    self._save_checkpoint("best_model.pt")
                else:
                    self.state.epochs_without_improvement += 1
                if self.visualizer is not None:
                    self.visualizer.on_epoch_end(self.model, epoch, self.device)

            if (
                opt_cfg.early_stopping.stop_training_on_plateau
                and self.state.epochs_without_improvement >= opt_cfg.early_stopping.plateau_patience
            ):
                logger.info("Stopping early: validation loss plateaued.")
                break

        if self.is_main_process:
            with open(self.run_path / "history.json", "w") as f:
                json.dump(self.state.history, f)
        if self.is_distributed:
            dist.destroy_process_group()


def main(args: Optional[list] = None) -> None:
    parser = argparse.ArgumentParser(description="Train a SLEAP model (PyTorch backend)")
    parser.add_argument("training_job_path", help="Path to training job profile (json/yaml)")
    parser.add_argument("labels_path", nargs="?", default=None, help="Path to labels file")
    parser.add_argument("--run_name", default="", help="Run name (appended to the folder)")
    parser.add_argument("--device", default=None, help="Device to train on, e.g. cuda:0")
    parser.add_argument("--first-gpu", action="store_true", help="Use only the first GPU")
    parser.add_argument("--amp", action="store_true", help="Enable mixed precision training")
    parsed = parser.parse_args(args)

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    if parsed.first_gpu:
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"

    config = load_config(parsed.training_job_path)
    if parsed.labels_path is not None:
        config.data.labels.training_labels = parsed.labels_path
    if parsed.run_name:
        config.outputs.run_name = parsed.run_name
    if parsed.device is not None:
        config.trainer.device = parsed.device
    if parsed.amp:
        config.optimization.mixed_precision = True

    trainer = Trainer(config)
    trainer.train()


if __name__ == "__main__":
    main()
