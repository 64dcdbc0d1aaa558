"""
TimesFM Finetuner: A flexible framework for finetuning TimesFM models on custom datasets.
"""

import logging
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

from timesfm.pytorch_patched_decoder import PatchedTimeSeriesDecoder

try:
    import wandb
except ImportError:  # wandb is optional
    wandb = None


@dataclass
class FinetuningConfig:
    """Configuration for model training.

    Args:
        batch_size: Number of samples per batch.
        num_epochs: Number of training epochs.
        learning_rate: Initial learning rate.
        weight_decay: L2 regularization factor.
        freq_type: Frequency, can be [0, 1, 2].
        use_quantile_loss: bool = False  # Flag to enable/disable quantile loss
        quantiles: Optional[List[float]] = None
        device: Device to train on ('cuda' or 'cpu').
        distributed: Whether to use distributed training.
        gpu_ids: List of GPU IDs to use.
        use_amp: Train with fp16 autocast and a gradient scaler.
    """

    batch_size: int = 32
    num_epochs: int = 20
    learning_rate: float = 1e-4
    weight_decay: float = 0.01
    freq_type: int = 0
    use_quantile_loss: bool = False
    quantiles: Optional[List[float]] = None
    device: str = "cuda" if torch.cuda.is_available() else "cpu"
    distributed: bool = False
    gpu_ids: List[int] = field(default_factory=lambda: [0])
    master_port: str = "12358"
    master_addr: str = "localhost"
    use_amp: bool = True
    use_wandb: bool = False
    wandb_project: str = "timesfm-finetuning"
    log_every_n_steps: int = 50
    val_check_interval: float = 0.5
    num_workers: int = 4


class TimesFMFinetuner:
    """Handles model training and validation.

    Args:
        model: PyTorch model to train.
        config: Training configuration.
        rank: Process rank for distributed training.
        loss_fn: Loss function (defaults to MSE).
        logger: Optional logging.Logger instance.
    """

    def __init__(
        self,
        model: nn.Module,
        config: FinetuningConfig,
        rank: int = 0,
        loss_fn: Optional[Callable] = None,
        logger: Optional[logging.Logger] = None,
    ):
        self.model = model
        self.config = config
        self.rank = rank
        self.logger = logger or logging.getLogger(__name__)
        if config.distributed:
            self.device = torch.device(f"cuda:{config.gpu_ids[rank]}")
        else:
            self.device = torch.device(config.device)
        self.loss_fn = loss_fn or (lambda x, y: torch.mean((x - y.squeeze(-1)) ** 2))

        if config.use_wandb and wandb is not None and rank == 0:
            wandb.init(project=config.wandb_project, config=config.__dict__)

    def _setup_distributed(self) -> None:
        """Initialize process group for DDP."""
        os.environ["MASTER_ADDR"] = self.config.master_addr
        os.environ["MASTER_PORT"] = self.config.master_port

        if not dist.is_initialized():
            dist.init_process_group(
                backend="nccl",
                world_size=len(self.config.gpu_ids),
                rank=self.rank,
            )
        torch.cuda.set_device(self.device)

    def _create_dataloader(self, dataset: Dataset, is_train: bool) -> DataLoader:
        """Create a DataLoader (with a DistributedSampler when running DDP)."""
        if self.config.distributed:
            sampler = DistributedSampler(
                dataset,
                num_replicas=len(self.config.gpu_ids),
                rank=dist.get_rank(),
                shuffle=is_train,
            )
        else:
            sampler = None

        return DataLoader(
            dataset,
            batch_size=self.config.batch_size,
            shuffle=(is_train and not self.config.distributed),
            sampler=sampler,
            num_workers=self.config.num_workers,
            pin_memory=True,
            pin_memory_device="cuda",
            persistent_workers=self.config.num_workers > 0,
        )

    def _quantile_loss(self, pred: torch.Tensor, actual: torch.Tensor, quantile: float) -> torch.Tensor:
        """Pinball loss for a single quantile level."""
        dev = actual - pred
        loss_first = dev * quantile
        loss_second = -dev * (1.0 - quantile)
        return 2 * torch.where(loss_first >= 0, loss_first, loss_second)

    def _process_batch(self, batch: List[torch.Tensor]) -> tuple:
        """Forward pass for one batch; returns (loss, predictions)."""
        x_context, x_padding, freq, x_future = [
            t.to(self.device, non_blocking=True) for t in batch
        ]

        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=self.config.use_amp):
            predictions = self.model(x_context, x_padding.float(), freq)
            predictions_mean = predictions[..., 0]
            last_patch_pred = predictions_mean[:, -1, :]

            loss = self.loss_fn(last_patch_pred, x_future.squeeze(-1))
            if self.config.use_quantile_loss:
                quantiles = self.config.quantiles or [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
                for i, quantile in enumerate(quantiles):
                    last_patch_quantile = predictions[:, -1, :, i + 1]
                    loss += torch.mean(
                        self._quantile_loss(last_patch_quantile, x_future.squeeze(-1), quantile)
                    )

        return loss, predictions

    def _train_epoch(self, train_loader: DataLoader, optimizer: torch.optim.Optimizer,
                     scaler: torch.cuda.amp.GradScaler) -> float:
        """Train for one epoch."""
        self.model.train()
        total_loss = 0.0
        num_batches = len(train_loader)

        for step, batch in enumerate(train_loader):
            loss, _ = self._process_batch(batch)

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=1.0)
            scaler.step(optimizer)
            scaler.update()

            total_loss += loss.item()
            if self.rank == 0 and step % self.config.log_every_n_steps == 0:
                self.logger.info(f"step {step}/{num_batches} loss {loss.item():.5f}")

        return total_loss / num_batches

    def _validate(self, val_loader: DataLoader) -> float:
        """Run validation and return the average loss."""
        self.model.eval()
        total_loss = 0.0
        num_batches = len(val_loader)

        with torch.no_grad():
            for batch in val_loader:
                loss, _ = self._process_batch(batch)
                total_loss += loss.item()

        avg = torch.tensor(total_loss / num_batches, device=self.device)
        if self.config.distributed:
            dist.all_reduce(avg, op=dist.ReduceOp.AVG)
        return avg.item()

    def finetune(self, train_dataset: Dataset, val_dataset: Dataset) -> Dict[str, Any]:
        """Train the TimesFM model.

        Args:
            train_dataset: Training dataset.
            val_dataset: Validation dataset.

        Returns:
            Dict containing the training history.
        """
        self.model = self.model.to(self.device)
        if self.config.distributed:
            self._setup_distributed()
            self.model = DDP(
                self.model,
                device_ids=[self.config.gpu_ids[self.rank]],
                output_device=self.config.gpu_ids[self.rank],
            )

        train_loader = self._create_dataloader(train_dataset, is_train=True)
        val_loader = self._create_dataloader(val_dataset, is_train=False)

        optimizer = torch.optim.Adam(
            self.model.parameters(),
            lr=self.config.learning_rate,
            weight_decay=self.config.weight_decay,
        )
        scaler = torch.cuda.amp.GradScaler(enabled=self.config.use_amp)

        history = {"train_loss": [], "val_loss": [], "learning_rate": []}

        self.logger.info(f"Starting training for {self.config.num_epochs} epochs...")
        self.logger.info(f"Training samples: {len(train_dataset)}")
        self.logger.info(f"Validation samples: {len(val_dataset)}")

        try:
            for epoch in range(self.config.num_epochs):
                if self.config.distributed:
                    train_loader.sampler.set_epoch(epoch)
                train_loss = self._train_epoch(train_loader, optimizer, scaler)
                val_loss = self._validate(val_loader)
                current_lr = optimizer.param_groups[0]["lr"]

                metrics = {
                    "train_loss": train_loss,
                    "val_loss": val_loss,
                    "learning_rate": current_lr,
                    "epoch": epoch + 1,
                    "peak_mem_gb": torch.cuda.max_memory_allocated(self.device) / 2**30,
                }

                if self.config.use_wandb and wandb is not None and self.rank == 0:
                    wandb.log(metrics)

                history["train_loss"].append(train_loss)
                history["val_loss"].append(val_loss)
                history["learning_rate"].append(current_lr)

                if self.rank == 0:
                    self.logger.info(
                        f"[Epoch {epoch+1}] Train Loss: {train_loss:.4f} | Val Loss: {val_loss:.4f}"
                    )
                torch.cuda.empty_cache()

            self.logger.info("Training completed successfully!")
        except KeyboardInterrupt:
            self.logger.info("Training interrupted by user")

        if self.config.distributed:
            dist.destroy_process_group()

        return {"history": history}


def _ddp_worker(rank: int, model_fn: Callable[[], PatchedTimeSeriesDecoder], config: FinetuningConfig,
                train_dataset: Dataset, val_dataset: Dataset) -> None:
    """Entry point of one spawned DDP process."""
    torch.cuda.set_device(config.gpu_ids[rank])
    model = model_fn()
    finetuner = TimesFMFinetuner(model, config, rank=rank)
    finetuner.finetune(train_dataset, val_dataset)


def run_finetuning(model_fn: Callable[[], PatchedTimeSeriesDecoder], config: FinetuningConfig,
                   train_dataset: Dataset, val_dataset: Dataset) -> Optional[Dict[str, Any]]:
    """Run single-process or multi-GPU (spawned DDP) finetuning."""
    if config.distributed:
        world_size = len(config.gpu_ids)
        assert world_size <= torch.cuda.device_count(), (
            f"Requested {world_size} GPUs but only {torch.cuda.device_count()} visible"
        )
        mp.spawn(_ddp_worker, args=(model_fn, config, train_dataset, val_dataset),
                 nprocs=world_size, join=True)
        return None

    np.random.seed(0)
    torch.manual_seed(0)
    finetuner = TimesFMFinetuner(model_fn(), config)
    return finetuner.finetune(train_dataset, val_dataset)
