"""Lightning probers used by the MARBLE benchmark.

A prober = (optional) frozen backbone -> layer aggregator -> small MLP head.
All metrics are torchmetrics objects so that they are synced correctly under DDP.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl
import torchmetrics
from torchmetrics.classification import MultilabelAUROC, MultilabelAveragePrecision, MulticlassAccuracy


class MLPProberBase(nn.Module):
    def __init__(self, d=768, layer="all", num_outputs=87, hidden_layer_sizes=(512,), dropout_p=0.2, n_tranformer_layer=12):
        super().__init__()
        self.layer = layer
        self.hidden_layer_sizes = list(hidden_layer_sizes)
        if layer == "all":
            # learnable weighted sum over the hidden states of every transformer layer (+ conv output)
            self.aggregator = nn.Conv1d(in_channels=n_tranformer_layer + 1, out_channels=1, kernel_size=1)
        else:
            self.aggregator = None

        dims = [d] + self.hidden_layer_sizes
        layers = []
        for i in range(len(dims) - 1):
            layers.append(nn.Linear(dims[i], dims[i + 1]))
            layers.append(nn.ReLU())
            layers.append(nn.Dropout(dropout_p))
        self.hidden = nn.Sequential(*layers)
        self.output = nn.Linear(dims[-1], num_outputs)

    def forward(self, x):
        # x: [B, L+1, D] when layer == "all", else [B, D]
        if self.aggregator is not None:
            x = self.aggregator(x).squeeze(1)
        elif x.dim() == 3:
            x = x[:, int(self.layer)]
        x = self.hidden(x)
        return self.output(x)


class ProberLightningBase(pl.LightningModule):
    def __init__(self, args):
        super().__init__()
        self.save_hyperparameters(ignore=["args"])
        self.args = args
        ds = args.model.downstream_structure
        self.model = MLPProberBase(
            d=ds.feature_extractor.pretrain.num_features,
            layer=ds.feature_extractor.layer,
            num_outputs=ds.downstream.num_outputs,
            hidden_layer_sizes=ds.downstream.hidden_layer_sizes,
            dropout_p=ds.downstream.dropout_p,
        )
        self.lr = float(args.optimizer.lr)
        self.weight_decay = float(args.optimizer.l2_weight_decay)

    def forward(self, x):
        return self.model(x)

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer, mode="max", factor=0.5, patience=self.args.scheduler.lr_scheduler_patience, verbose=True,
        )
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "monitor": self.args.logger.monitor}}

    def loss(self, logits, y):
        raise NotImplementedError

    def training_step(self, batch, batch_idx):
        x, y, _ = batch
        logits = self(x)
        loss = self.loss(logits, y)
        self.log("train_loss", loss, on_step=False, on_epoch=True, prog_bar=True, batch_size=x.size(0), sync_dist=True)
        return loss


class MultiLabelProber(ProberLightningBase):
    def __init__(self, args):
        super().__init__(args)
        n = args.model.downstream_structure.downstream.num_outputs
        self.valid_aucroc = MultilabelAUROC(num_labels=n, average="macro")
        self.valid_ap = MultilabelAveragePrecision(num_labels=n, average="macro")
        self.test_aucroc = MultilabelAUROC(num_labels=n, average="macro")
        self.test_ap = MultilabelAveragePrecision(num_labels=n, average="macro")

    def loss(self, logits, y):
        return F.binary_cross_entropy_with_logits(logits, y.float())

    def validation_step(self, batch, batch_idx):
        x, y, _ = batch
        logits = self(x)
        loss = self.loss(logits, y)
        probs = torch.sigmoid(logits)
        self.valid_aucroc.update(probs, y.long())
        self.valid_ap.update(probs, y.long())
        self.log("valid_loss", loss, on_epoch=True, batch_size=x.size(0), sync_dist=True)

    def on_validation_epoch_end(self):
        self.log("valid_aucroc", self.valid_aucroc.compute(), prog_bar=True)
        self.log("valid_ap", self.valid_ap.compute(), prog_bar=True)
        self.valid_aucroc.reset()
        self.valid_ap.reset()

    def test_step(self, batch, batch_idx):
        x, y, _ = batch
        probs = torch.sigmoid(self(x))
        self.test_aucroc.update(probs, y.long())
        self.test_ap.update(probs, y.long())

    def on_test_epoch_end(self):
        self.log("test_aucroc", self.test_aucroc.compute())
        self.log("test_ap", self.test_ap.compute())
        self.test_aucroc.reset()
        self.test_ap.reset()


class MultiClassProber(ProberLightningBase):
    def __init__(self, args):
        super().__init__(args)
        n = args.model.downstream_structure.downstream.num_outputs
        self.valid_acc = MulticlassAccuracy(num_classes=n, average="micro")
        self.test_acc = MulticlassAccuracy(num_classes=n, average="micro")

    def loss(self, logits, y):
        return F.cross_entropy(logits, y.long())

    def validation_step(self, batch, batch_idx):
        x, y, _ = batch
        logits = self(x)
        self.valid_acc.update(logits.argmax(-1), y.long())
        self.log("valid_loss", self.loss(logits, y), on_epoch=True, batch_size=x.size(0), sync_dist=True)

    def on_validation_epoch_end(self):
        self.log("valid_acc", self.valid_acc.compute(), prog_bar=True)
        self.valid_acc.reset()

    def test_step(self, batch, batch_idx):
        x, y, _ = batch
        self.test_acc.update(self(x).argmax(-1), y.long())

    def on_test_epoch_end(self):
        self.log("test_acc", self.test_acc.compute())
        self.test_acc.reset()


class RegressionProber(ProberLightningBase):
    """Emotion regression (EMO: arousal / valence), reported as R2."""

    def __init__(self, args):
        super().__init__(args)
        n = args.model.downstream_structure.downstream.num_outputs
        self.valid_r2 = torchmetrics.R2Score(num_outputs=n, multioutput="uniform_average")
        self.test_r2 = torchmetrics.R2Score(num_outputs=n, multioutput="uniform_average")

    def loss(self, logits, y):
        return F.mse_loss(logits, y.float())

    def validation_step(self, batch, batch_idx):
        x, y, _ = batch
        pred = self(x)
        self.valid_r2.update(pred, y.float())
        self.log("valid_loss", self.loss(pred, y), on_epoch=True, batch_size=x.size(0), sync_dist=True)

    def on_validation_epoch_end(self):
        self.log("valid_r2", self.valid_r2.compute(), prog_bar=True)
        self.valid_r2.reset()

    def test_step(self, batch, batch_idx):
        x, y, _ = batch
        self.test_r2.update(self(x), y.float())

    def on_test_epoch_end(self):
        self.log("test_r2", self.test_r2.compute())
        self.test_r2.reset()
