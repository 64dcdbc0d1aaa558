from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import pytorch_lightning as pl
import torch

import laia.common.logging as log
from laia.common.arguments import OptimizerArgs, SchedulerArgs
from laia.common.types import Loss as LossT
from laia.engine.engine_exception import EngineException
from laia.losses.loss import Loss
from laia.utils import check_tensor

_logger = log.get_logger(__name__)


class EngineModule(pl.core.LightningModule):
    def __init__(
        self,
        model: torch.nn.Module,
        criterion: Optional[Callable],
        optimizer: OptimizerArgs = OptimizerArgs(),
        scheduler: SchedulerArgs = SchedulerArgs(),
        batch_input_fn: Optional[Callable] = None,
        batch_target_fn: Optional[Callable] = None,
        batch_id_fn: Optional[Callable] = None,
        skip_oom_batches: bool = True,
    ):
        super().__init__()
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.batch_input_fn = batch_input_fn
        self.batch_target_fn = batch_target_fn
        self.batch_id_fn = batch_id_fn
        self.skip_oom_batches = skip_oom_batches
        self.batch_y_hat = None
        # filled by the ProgressBarGPUStats callback
        self.gpu_stats: Dict[str, str] = {}
        self.num_oom_batches = 0
        self.save_hyperparameters(
            {"optimizer": optimizer.__dict__, "scheduler": scheduler.__dict__}
        )

    def configure_optimizers(self) -> Dict:
        optimizer = self.get_optimizer()
        if self.scheduler.active:
            return {
                "optimizer": optimizer,
                "lr_scheduler": {
                    "scheduler": torch.optim.lr_scheduler.ReduceLROnPlateau(
                        optimizer,
                        mode="min",
                        factor=self.scheduler.factor,
                        patience=self.scheduler.patience,
                    ),
                    "monitor": self.scheduler.monitor,
                },
            }
        return optimizer

    def get_optimizer(self) -> torch.optim.Optimizer:
        cls = {
            "SGD": torch.optim.SGD,
            "RMSProp": torch.optim.RMSprop,
            "Adam": torch.optim.Adam,
        }[self.optimizer.name]
        kwargs = {
            "lr": self.optimizer.learning_rate,
            "weight_decay": self.optimizer.weight_l2_penalty,
        }
        if self.optimizer.name in ("SGD", "RMSProp"):
            kwargs["momentum"] = self.optimizer.momentum
        if self.optimizer.name == "SGD":
            kwargs["nesterov"] = self.optimizer.nesterov
        return cls(self.model.parameters(), **kwargs)

    def prepare_batch(self, batch: Any) -> Tuple[Any, Any]:
        if self.batch_input_fn and self.batch_target_fn:
            return self.batch_input_fn(batch), self.batch_target_fn(batch)
        if isinstance(batch, tuple) and len(batch) == 2:
            return batch
        return batch, None

    def check_tensor(self, batch: Any, batch_y_hat: Any) -> None:
        # note: only active when logging level <= DEBUG
        check_tensor(
            tensor=batch_y_hat.data,
            logger=__name__,
            msg=(
                "Found {abs_num} ({rel_num:.2%}) infinite values in the model output "
                "at epoch={epoch}, batch={batch}, global_step={global_step}"
            ),
            epoch=self.current_epoch,
            batch=self.batch_id_fn(batch) if self.batch_id_fn else batch,
            global_step=self.global_step,
        )

    @contextmanager
    def exception_catcher(self, batch: Any) -> Iterable:
        try:
            yield
        except RuntimeError as e:
            if self.skip_oom_batches and "CUDA out of memory" in str(e):
                self.num_oom_batches += 1
                _logger.warning(
                    "Out of memory on batch {} ({} so far), skipping it",
                    self.batch_id_fn(batch) if self.batch_id_fn else "?",
                    self.num_oom_batches,
                )
                # release the cached blocks of the half-done forward pass so
                # the next batch starts from a clean allocator
                for p in self.model.parameters():
                    if p.grad is not None:
                        del p.grad
                torch.cuda.empty_cache()
                return
            raise EngineException(
                epoch=self.current_epoch,
                global_step=self.global_step,
                batch=self.batch_id_fn(batch) if self.batch_id_fn else None,
                cause=e,
            ) from e
        except Exception as e:
            raise EngineException(
                epoch=self.current_epoch,
                global_step=self.global_step,
                batch=self.batch_id_fn(batch) if self.batch_id_fn else None,
                cause=e,
            ) from e

    def compute_loss(self, batch: Any, batch_y_hat: Any, batch_y: Any) -> LossT:
        with self.exception_catcher(batch):
            kwargs = {}
            if isinstance(self.criterion, Loss) and self.batch_id_fn:
                kwargs = {"batch_ids": self.batch_id_fn(batch)}
            batch_loss = self.criterion(batch_y_hat, batch_y, **kwargs)
            if batch_loss is not None:
                if torch.sum(torch.isfinite(batch_loss)) == 0:
                    log.warning("The loss is NaN or ∞ at batch {}", batch)
                    return None
            return batch_loss

    def training_step(self, batch: Any, *args, **kwargs):
        batch_x, batch_y = self.prepare_batch(batch)
        with self.exception_catcher(batch):
            batch_y_hat = self.model(batch_x)
        self.check_tensor(batch, batch_y_hat)
        batch_loss = self.compute_loss(batch, batch_y_hat, batch_y)
        if batch_loss is None:
            return None
        self.log(
            "tr_loss",
            batch_loss,
            on_step=True,
            on_epoch=True,
            prog_bar=True,
            sync_dist=self.trainer.num_processes > 1 or self.trainer.num_gpus > 1,
        )
        return {"loss": batch_loss, "batch_y_hat": batch_y_hat}

    def validation_step(self, batch: Any, *args, **kwargs):
        batch_x, batch_y = self.prepare_batch(batch)
        with self.exception_catcher(batch):
            batch_y_hat = self.model(batch_x)
        batch_loss = self.compute_loss(batch, batch_y_hat, batch_y)
        if batch_loss is None:
            return None
        self.log("va_loss", batch_loss, on_epoch=True, prog_bar=True, sync_dist=True)
        return {"loss": batch_loss, "batch_y_hat": batch_y_hat}

    def get_progress_bar_dict(self) -> Dict:
        items = super().get_progress_bar_dict()
        items.pop("v_num", None)
        items.update(self.gpu_stats)
        if self.num_oom_batches:
            items["oom"] = self.num_oom_batches
        return items

    def on_train_epoch_end(self, *args, **kwargs) -> None:
        if self.trainer.on_gpu and self.trainer.is_global_zero:
            peak = torch.cuda.max_memory_allocated(self.device) / 2**30
            _logger.info("Epoch {}: peak GPU memory {:.2f} GiB", self.current_epoch, peak)
            torch.cuda.reset_peak_memory_stats(self.device)
