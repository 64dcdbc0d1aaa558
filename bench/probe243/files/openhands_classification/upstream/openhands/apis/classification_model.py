import time

import torch
import torch.nn.functional as F
import torchmetrics
import pytorch_lightning as pl
import hydra

from .inference import InferenceModel
from ..core.losses import CrossEntropyLoss, SmoothedCrossEntropyLoss
from ..core.data import PoseDataModule


class ClassificationModel(InferenceModel):
    """
    Classification Model interface for ISLR. Wraps the encoder/decoder built by
    `InferenceModel.create_model` and adds the training / validation loops.

    Args:
        cfg (dict): configuration set.
        trainer (object): trainer object from Pytorch Lightning.
    """

    def __init__(self, cfg, trainer):
        super().__init__(cfg, stage="fit")
        self.trainer = trainer
        self.setup_metrics()
        self.loss = self.setup_loss(self.cfg.optim)
        self._epoch_start = None

    def setup_metrics(self):
        """
        Intializes metric objects.
        """
        n_classes = self.datamodule.num_class
        self.accuracy_metric = torchmetrics.functional.accuracy
        self.val_top5 = torchmetrics.Accuracy(top_k=5, num_classes=n_classes)

    def training_step(self, batch, batch_idx):
        """
        Lightning calls this inside the training loop with the data from the training dataloader
        passed in as `batch` and calculates the loss and the accuracy.
        """
        y_hat = self.model(batch["frames"])
        loss = self.loss(y_hat, batch["labels"])
        acc = self.accuracy_metric(F.softmax(y_hat, dim=-1), batch["labels"])
        self.log("train_loss", loss, on_step=True, on_epoch=True, prog_bar=True, logger=True)
        self.log("train_acc", acc, on_step=True, on_epoch=True, prog_bar=True, logger=True)
        return {"loss": loss, "train_acc": acc}

    def validation_step(self, batch, batch_idx):
        """
        Lightning calls this inside the training loop with the data from the validation dataloader
        passed in as `batch` and calculates the loss and the accuracy.
        """
        y_hat = self.model(batch["frames"])
        loss = self.loss(y_hat, batch["labels"])
        preds = F.softmax(y_hat, dim=-1)
        acc_top1 = self.accuracy_metric(preds, batch["labels"])
        self.val_top5.update(preds, batch["labels"])
        self.log("val_loss", loss, on_epoch=True, prog_bar=True, logger=True, sync_dist=True)
        self.log("val_acc", acc_top1, on_epoch=True, prog_bar=True, logger=True, sync_dist=True)
        return {"valid_loss": loss, "valid_acc": acc_top1}

    def validation_epoch_end(self, outputs):
        self.log("val_acc_top5", self.val_top5.compute(), prog_bar=True, sync_dist=True)
        self.val_top5.reset()

    def on_train_epoch_start(self):
        self._epoch_start = time.time()
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()

    def on_train_epoch_end(self, *args, **kwargs):
        elapsed = time.time() - self._epoch_start if self._epoch_start else 0.0
        self.log("epoch_time_s", elapsed, logger=True)
        if self.trainer.is_global_zero and torch.cuda.is_available():
            peak_mb = torch.cuda.max_memory_allocated() / (1024 * 1024)
            self.log("gpu_peak_mem_mb", peak_mb, logger=True)

    def configure_optimizers(self):
        """
        Returns the optimizer and the LR scheduler to be used by Lightning.
        """
        optimizer = self.get_optimizer(self.cfg.optim.optimizer)
        if "scheduler" not in self.cfg.optim:
            return optimizer
        scheduler = self.get_scheduler(optimizer, self.cfg.optim.scheduler)
        return [optimizer], [scheduler]

    def get_optimizer(self, conf):
        optimizer_conf = dict(conf)
        name = optimizer_conf.pop("name")
        optimizer = getattr(torch.optim, name)
        return optimizer(params=self.parameters(), **optimizer_conf)

    def get_scheduler(self, optimizer, conf):
        """
        Returns the scheduler based on the config.
        """
        scheduler = getattr(torch.optim.lr_scheduler, conf.name)
        return {
            "scheduler": scheduler(optimizer, **conf.params),
            "interval": conf.get("interval", "epoch"),
            "monitor": conf.get("monitor", "val_loss"),
        }

    def setup_loss(self, conf):
        """
        Initializes the loss function based on the loss parameter mentioned in the config.
        """
        loss = conf.loss
        assert loss in ["CrossEntropyLoss", "SmoothedCrossEntropyLoss"]
        if loss == "CrossEntropyLoss":
            return CrossEntropyLoss()
        return SmoothedCrossEntropyLoss()

    def fit(self):
        """
        Method to be called to start the training.
        """
        self.trainer.fit(self, self.datamodule)

    def test(self, ckpt_path="best"):
        """
        Evaluates the (best) checkpoint on the test split with the same trainer.
        """
        return self.trainer.test(self, datamodule=self.datamodule, ckpt_path=ckpt_path)


@hydra.main(config_path="../../examples/configs/wlasl", config_name="decoupled_gcn")
def main(cfg):
    from ..core.exp_utils import get_trainer
    trainer = get_trainer(cfg)
    model = ClassificationModel(cfg=cfg, trainer=trainer)
    model.init_from_checkpoint_if_available()
    model.fit()


if __name__ == "__main__":
    main()
