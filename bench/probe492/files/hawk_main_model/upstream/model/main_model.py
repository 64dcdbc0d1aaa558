# Define the MainModel class, a LightningModule wrapper around a timm or custom
# backbone, with a classifier head for the bird/amphibian/mammal classes.

import math

import numpy as np
import lightning as L
import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchmetrics

from core import cfg
from model import efficientnet, hgnet, vovnet


def get_model(model_name, num_classes, pretrained=False, **kwargs):
    if model_name.startswith("custom_efficientnet"):
        tokens = model_name.split("_")
        model_size = int(tokens[-1])
        return efficientnet.get_model(model_size, num_classes=num_classes, **kwargs)
    elif model_name.startswith("custom_hgnet"):
        tokens = model_name.split("_")
        model_size = int(tokens[-1])
        return hgnet.get_model(model_size, num_classes=num_classes, **kwargs)
    elif model_name.startswith("custom_vovnet"):
        tokens = model_name.split("_")
        model_size = int(tokens[-1])
        return vovnet.get_model(model_size, num_classes=num_classes, **kwargs)
    else:
        # a timm model, e.g. "tf_efficientnetv2_b0"
        return timm.create_model(model_name, pretrained=pretrained, in_chans=1,
                                 num_classes=num_classes, **kwargs)


class MainModel(L.LightningModule):
    def __init__(self, train_class_names, train_class_codes, test_class_names, test_class_codes,
                 weights, model_name, load_weights, num_train_specs, multi_label=True):
        super().__init__()
        self.save_hyperparameters()

        self.train_class_names = train_class_names
        self.train_class_codes = train_class_codes
        self.test_class_names = test_class_names
        self.test_class_codes = test_class_codes
        self.num_train_specs = num_train_specs
        self.multi_label = multi_label
        self.num_classes = len(train_class_names)

        kwargs = {}
        if cfg.train.dropout is not None:
            kwargs["drop_rate"] = cfg.train.dropout
        if cfg.train.drop_path_rate is not None:
            kwargs["drop_path_rate"] = cfg.train.drop_path_rate

        self.base_model = get_model(model_name, self.num_classes, pretrained=load_weights, **kwargs)

        if weights is not None:
            self.register_buffer("class_weights", torch.tensor(weights, dtype=torch.float32))
        else:
            self.class_weights = None

        if multi_label:
            self.loss_fn = nn.BCEWithLogitsLoss(pos_weight=None)
        else:
            self.loss_fn = nn.CrossEntropyLoss(label_smoothing=cfg.train.label_smoothing)

        self.train_acc = torchmetrics.classification.MultilabelAccuracy(num_labels=self.num_classes) \
            if multi_label else torchmetrics.classification.MulticlassAccuracy(num_classes=self.num_classes)
        self.val_acc = self.train_acc.clone()

    def forward(self, x):
        return self.base_model(x)

    def _shared_step(self, batch):
        x, y = batch
        logits = self(x)
        if self.multi_label and cfg.train.label_smoothing > 0:
            y = y * (1 - cfg.train.label_smoothing) + 0.5 * cfg.train.label_smoothing
        loss = self.loss_fn(logits, y)
        return loss, logits, y

    def training_step(self, batch, batch_idx):
        loss, logits, y = self._shared_step(batch)
        self.log("train_loss", loss, on_step=False, on_epoch=True, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        loss, logits, y = self._shared_step(batch)
        self.log("val_loss", loss, on_step=False, on_epoch=True, prog_bar=True)

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=cfg.train.learning_rate,
                                      weight_decay=cfg.train.weight_decay)
        total_steps = max(1, cfg.train.num_epochs * math.ceil(self.num_train_specs / cfg.train.batch_size))
        scheduler = torch.optim.lr_scheduler.OneCycleLR(
            optimizer, max_lr=cfg.train.learning_rate, total_steps=total_steps,
            pct_start=max(cfg.train.warmup_fraction, 0.01))
        return [optimizer], [{"scheduler": scheduler, "interval": "step"}]

    def freeze_backbone(self):
        for name, param in self.base_model.named_parameters():
            if "classifier" not in name and "head" not in name:
                param.requires_grad = False

    # return predictions for the given spectrograms, in blocks to limit memory use
    def get_predictions(self, specs, device, use_softmax=True):
        block_size = 128
        predictions = None
        start_idx = 0
        while start_idx < len(specs):
            end_idx = min(start_idx + block_size, len(specs))
            with torch.no_grad():
                torch_specs = specs[start_idx:end_idx].to(device)
                block_predictions = self(torch_specs)
                if use_softmax:
                    block_predictions = F.softmax(block_predictions, dim=1)
                else:
                    block_predictions = torch.sigmoid(block_predictions)
                block_predictions = block_predictions.float().cpu().numpy()

            if predictions is None:
                predictions = block_predictions
            else:
                predictions = np.concatenate((predictions, block_predictions))

            start_idx += block_size

        return predictions

    # return embeddings (penultimate layer) for the given spectrograms
    def get_embeddings(self, specs, device):
        self.base_model.reset_classifier(0)
        embeddings = []
        with torch.no_grad():
            for i in range(0, len(specs), 128):
                embeddings.append(self(specs[i : i + 128].to(device)).float().cpu().numpy())
        return np.concatenate(embeddings)
