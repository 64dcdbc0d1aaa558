import logging
import pickle
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl
from pycm import ConfusionMatrix
from torch.utils.data import DataLoader
from torchmetrics import Accuracy

log = logging.getLogger(__name__)


class TeCNO(pl.LightningModule):
    """Second TeCNO stage: multi-stage causal TCN trained on pre-extracted frame features."""

    def __init__(self, hparams, model, dataset):
        super(TeCNO, self).__init__()
        self.save_hyperparameters(hparams)
        self.model = model
        self.dataset = dataset
        self.weights_train = np.asarray(self.dataset.weights["train"])
        # weights are placed on the GPU once; the loss is recreated per stage below
        self.ce_loss = nn.CrossEntropyLoss(
            weight=torch.from_numpy(self.weights_train).float().cuda()
        )
        self.init_metrics()

    def init_metrics(self):
        self.train_acc_stages = nn.ModuleList(
            [Accuracy(task="multiclass", num_classes=7) for _ in range(self.hparams.mstcn_stages)]
        )
        self.val_acc_stages = nn.ModuleList(
            [Accuracy(task="multiclass", num_classes=7) for _ in range(self.hparams.mstcn_stages)]
        )
        self.max_acc_last_stage = {"epoch": 0, "acc": 0}
        self.max_acc_global = {"epoch": 0, "acc": 0, "stage": 0, "last_stage_max_acc_is_global": False}

    def forward(self, x):
        video_fe = x.transpose(2, 1)
        y_classes = self.model.forward(video_fe)
        y_classes = torch.softmax(y_classes, dim=2)
        return y_classes

    def loss_function(self, y_classes, labels):
        stages = y_classes.shape[0]
        clc_loss = 0
        for j in range(stages):  # range(num_stages):
            p_classes = y_classes[j].squeeze().transpose(1, 0)
            ce_loss = self.ce_loss(p_classes, labels.squeeze())
            clc_loss += ce_loss
        clc_loss = clc_loss / (stages * 1.0)
        return clc_loss

    def get_class_acc(self, y_true, y_classes):
        y_true = y_true.squeeze()
        y_classes = y_classes.squeeze()
        y_classes = torch.argmax(y_classes, dim=0)
        acc_classes = torch.sum(y_true == y_classes).float() / (y_true.shape[0] * 1.0)
        return acc_classes

    def get_class_acc_each_layer(self, y_true, y_classes):
        y_true = y_true.squeeze()
        accs_classes = []
        for i in range(y_classes.shape[0]):
            acc_classes = self.get_class_acc(y_true, y_classes[i, 0])
            accs_classes.append(acc_classes)
        return accs_classes

    def training_step(self, batch, batch_idx):
        stem, y_hat, y = batch
        y_pred = self.forward(stem)
        loss = self.loss_function(y_pred, y)
        self.log("loss", loss, on_epoch=True, on_step=True)
        for s in range(y_pred.shape[0]):
            self.train_acc_stages[s](torch.argmax(y_pred[s, 0], dim=0), y.squeeze())
            self.log(f"train_S{s + 1}_acc_phase", self.train_acc_stages[s], on_epoch=True, on_step=False)
        return loss

    def validation_step(self, batch, batch_idx):
        stem, y_hat, y = batch
        y_pred = self.forward(stem)
        val_loss = self.loss_function(y_pred, y)
        self.log("val_loss", val_loss, on_epoch=True, on_step=False, sync_dist=True)
        for s in range(y_pred.shape[0]):
            self.val_acc_stages[s](torch.argmax(y_pred[s, 0], dim=0), y.squeeze())
            self.log(f"val_S{s + 1}_acc_phase", self.val_acc_stages[s], on_epoch=True, on_step=False)

    def on_validation_epoch_end(self):
        last = self.hparams.mstcn_stages - 1
        val_acc = self.val_acc_stages[last].compute().item()
        if val_acc > self.max_acc_last_stage["acc"]:
            self.max_acc_last_stage = {"epoch": self.current_epoch, "acc": val_acc}
        self.log("val_acc", val_acc)
        self.log("max_acc_last_stage", self.max_acc_last_stage["acc"])

    def save_predictions(self, video_idx, y_pred, y):
        out_dir = Path(self.hparams.output_path) / "tecno_predictions"
        out_dir.mkdir(exist_ok=True)
        with open(out_dir / f"video_{int(video_idx)}.pkl", "wb") as f:
            pickle.dump({"pred": y_pred.cpu().numpy(), "gt": y.cpu().numpy()}, f)

    def test_step(self, batch, batch_idx):
        stem, y_hat, y = batch
        y_pred = self.forward(stem)
        acc_stages = self.get_class_acc_each_layer(y, y_pred)
        last = acc_stages[-1]
        vid_idx = torch.tensor([self.dataset.vids_for_test[batch_idx]]).cuda()
        self.save_predictions(vid_idx.item(), y_pred[-1, 0].argmax(dim=0), y.squeeze())
        cm = ConfusionMatrix(
            actual_vector=y.squeeze().cpu().numpy(),
            predict_vector=torch.argmax(y_pred[-1, 0], dim=0).cpu().numpy(),
        )
        self.log("test_acc", last, on_epoch=True, on_step=False)
        self.log("test_f1_macro", float(cm.F1_Macro), on_epoch=True, on_step=False)
        return {"test_acc": last}

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=self.hparams.learning_rate)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.5, patience=5)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "monitor": "val_acc"}}

    def __dataloader(self, split=None):
        dataset = self.dataset.data[split]
        # video sequences have different lengths, hence batch size 1
        return DataLoader(
            dataset=dataset,
            batch_size=1,
            shuffle=split == "train",
            num_workers=self.hparams.num_workers,
            pin_memory=False,
        )

    def train_dataloader(self):
        return self.__dataloader("train")

    def val_dataloader(self):
        return self.__dataloader("val")

    def test_dataloader(self):
        return self.__dataloader("test")

    @staticmethod
    def add_module_specific_args(parser):  # pragma: no cover
        regressiontcn = parser.add_argument_group(title="regression tcn specific args options")
        regressiontcn.add_argument("--learning_rate", default=0.001, type=float)
        regressiontcn.add_argument("--optimizer_name", default="adam", type=str)
        regressiontcn.add_argument("--batch_size", default=1, type=int)
        return parser
