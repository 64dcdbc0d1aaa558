"""Generic CTR trainer (FuxiCTR-like) for DCN-v2 / FinalMLP style models with mixed precision.

The model exposes `forward(batch) -> {"y_pred": logits}`; features arrive as a dict of tensors.
"""
import logging
import os
import time

import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import log_loss, roc_auc_score
from torch.utils.data import DataLoader

logger = logging.getLogger(__name__)


def get_device(gpu=-1):
    if gpu >= 0 and torch.cuda.is_available():
        device = torch.device("cuda:" + str(gpu))
    else:
        device = torch.device("cpu")
    return device


def seed_everything(seed=2023):
    os.environ["PYTHONHASHSEED"] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.deterministic = True


class CrossNetV2(nn.Module):
    def __init__(self, input_dim, num_layers):
        super().__init__()
        self.cross_layers = nn.ModuleList(nn.Linear(input_dim, input_dim) for _ in range(num_layers))

    def forward(self, x0):
        xi = x0
        for layer in self.cross_layers:
            xi = xi + x0 * layer(xi)
        return xi


class DCNv2(nn.Module):
    def __init__(self, feature_sizes, embedding_dim=16, num_cross_layers=3, dnn_hidden=(400, 400, 400), dropout=0.1):
        super().__init__()
        self.embeddings = nn.ModuleDict({name: nn.Embedding(size, embedding_dim) for name, size in feature_sizes.items()})
        input_dim = embedding_dim * len(feature_sizes)
        self.crossnet = CrossNetV2(input_dim, num_cross_layers)
        layers, d = [], input_dim
        for h in dnn_hidden:
            layers += [nn.Linear(d, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Dropout(dropout)]
            d = h
        self.dnn = nn.Sequential(*layers)
        self.fc = nn.Linear(input_dim + d, 1)

    def forward(self, batch):
        emb = torch.cat([self.embeddings[k](batch[k]) for k in self.embeddings], dim=-1)
        out = torch.cat([self.crossnet(emb), self.dnn(emb)], dim=-1)
        return {"y_pred": self.fc(out).squeeze(-1)}


class Trainer:
    def __init__(self, model, gpu=0, lr=1e-3, epochs=10, amp=True, patience=2, checkpoint_dir="checkpoints"):
        self.device = get_device(gpu)
        self.model = model.to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.loss_fn = nn.BCEWithLogitsLoss()
        self.epochs = epochs
        self.amp = amp
        self.scaler = torch.cuda.amp.GradScaler(enabled=amp)
        self.patience = patience
        self.checkpoint = os.path.join(checkpoint_dir, "best.pt")
        os.makedirs(checkpoint_dir, exist_ok=True)

    def _to_device(self, batch):
        return {k: v.to(self.device, non_blocking=True) for k, v in batch.items()}

    def train_epoch(self, loader):
        self.model.train()
        total, n = 0.0, 0
        start = time.time()
        for step, batch in enumerate(loader):
            batch = self._to_device(batch)
            y = batch.pop("label").float()
            self.optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=self.amp):
                y_pred = self.model(batch)["y_pred"]
                loss = self.loss_fn(y_pred, y)
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            nn.utils.clip_grad_norm_(self.model.parameters(), 10.0)
            self.scaler.step(self.optimizer)
            self.scaler.update()
            total += loss.item() * y.size(0)
            n += y.size(0)
            if step % 1000 == 0:
                logger.info("step %d loss %.5f (%.1f samples/s)", step, total / max(n, 1), n / (time.time() - start))
        return total / max(n, 1)

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        preds, labels = [], []
        for batch in loader:
            batch = self._to_device(batch)
            y = batch.pop("label")
            with torch.cuda.amp.autocast(enabled=self.amp):  # eval in fp16 too
                p = torch.sigmoid(self.model(batch)["y_pred"].float())
            preds.append(p.cpu().numpy())
            labels.append(y.cpu().numpy())
        preds, labels = np.concatenate(preds), np.concatenate(labels)
        return {"AUC": roc_auc_score(labels, preds), "logloss": log_loss(labels, preds, eps=1e-7)}

    def fit(self, train_loader: DataLoader, valid_loader: DataLoader):
        best, bad = -np.inf, 0
        for epoch in range(self.epochs):
            loss = self.train_epoch(train_loader)
            metrics = self.evaluate(valid_loader)
            logger.info("epoch %d train loss %.5f valid %s", epoch, loss, metrics)
            if metrics["AUC"] > best:
                best, bad = metrics["AUC"], 0
                torch.save(self.model.state_dict(), self.checkpoint)
            else:
                bad += 1
                for g in self.optimizer.param_groups:
                    g["lr"] *= 0.1
                if bad >= self.patience:
                    logger.info("early stop at epoch %d", epoch)
                    break
        self.model.load_state_dict(torch.load(self.checkpoint, map_location=self.device))
        return best


def make_loader(dataset, batch_size=10000, shuffle=False):
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, num_workers=4, pin_memory=True,
                      persistent_workers=True)
