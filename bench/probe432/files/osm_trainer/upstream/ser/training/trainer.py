"""Training loop shared by the openSMILE heads (classification or CCC regression)."""
import logging
import math
import os
import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import f1_score, recall_score

log = logging.getLogger(__name__)


@dataclass
class TrainConfig:
    epochs: int = 60
    lr: float = 1e-3
    weight_decay: float = 1e-4
    grad_clip: float = 5.0
    amp: bool = True
    patience: int = 10
    task: str = "classification"  # or "regression"
    multi_gpu: bool = False
    out_dir: str = "exp"
    log_every: int = 50
    metric: str = "uar"
    extra: dict = field(default_factory=dict)


def unweighted_average_recall(y_true, y_pred):
    return recall_score(y_true, y_pred, average="macro")


def ccc(x, y):
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    mx, my = x.mean(), y.mean()
    vx, vy = x.var(), y.var()
    cov = ((x - mx) * (y - my)).mean()
    return 2 * cov / (vx + vy + (mx - my) ** 2 + 1e-12)


class Trainer:
    def __init__(self, model, cfg: TrainConfig, device, criterion=None):
        self.cfg = cfg
        self.device = device
        self.model = model.to(device)

        n_gpus = torch.cuda.device_count()
        if cfg.multi_gpu and n_gpus > 1:
            log.info("wrapping model in DataParallel over %d GPUs", n_gpus)
            self.model = nn.DataParallel(self.model)

        if criterion is None:
            criterion = nn.CrossEntropyLoss() if cfg.task == "classification" else nn.MSELoss()
        self.criterion = criterion

        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(self.optimizer, mode="max", factor=0.5, patience=3)

        self.use_amp = cfg.amp and device.type == "cuda"
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp)

        os.makedirs(cfg.out_dir, exist_ok=True)
        self.best_score = -math.inf
        self.best_path = os.path.join(cfg.out_dir, "best.pt")

    def _to_device(self, batch):
        x, lengths, y = batch
        return (x.to(self.device, non_blocking=True),
                lengths,
                y.to(self.device, non_blocking=True))

    def train_epoch(self, loader, epoch):
        self.model.train()
        running, n = 0.0, 0
        t0 = time.time()
        for step, batch in enumerate(loader):
            x, lengths, y = self._to_device(batch)
            self.optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=self.use_amp):
                out = self.model(x, lengths)
                if self.cfg.task == "regression":
                    loss = self.criterion(out.float(), y.float())
                else:
                    loss = self.criterion(out.float(), y)
            self.scaler.scale(loss).backward()
            if self.cfg.grad_clip > 0:
                self.scaler.unscale_(self.optimizer)
                nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.grad_clip)
            self.scaler.step(self.optimizer)
            self.scaler.update()

            running += loss.item() * x.size(0)
            n += x.size(0)
            if step % self.cfg.log_every == 0:
                log.info("epoch %d step %d loss %.4f (%.1f it/s)", epoch, step, loss.item(),
                         (step + 1) / max(time.time() - t0, 1e-6))
        return running / max(n, 1)

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        preds, golds = [], []
        for batch in loader:
            x, lengths, y = self._to_device(batch)
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.use_amp):
                out = self.model(x, lengths)
            out = out.float()
            if self.cfg.task == "classification":
                preds.append(out.argmax(-1).cpu().numpy())
            else:
                preds.append(out.cpu().numpy())
            golds.append(y.cpu().numpy())
        preds, golds = np.concatenate(preds), np.concatenate(golds)
        if self.cfg.task == "classification":
            return {
                "uar": unweighted_average_recall(golds, preds),
                "war": float((golds == preds).mean()),
                "f1": f1_score(golds, preds, average="macro"),
            }
        cccs = [ccc(preds[:, i], golds[:, i]) for i in range(golds.shape[1])]
        return {"ccc": float(np.mean(cccs)), **{f"ccc_{i}": c for i, c in enumerate(cccs)}}

    def fit(self, train_loader, dev_loader):
        bad_epochs = 0
        for epoch in range(1, self.cfg.epochs + 1):
            t0 = time.time()
            train_loss = self.train_epoch(train_loader, epoch)
            scores = self.evaluate(dev_loader)
            score = scores[self.cfg.metric]
            self.scheduler.step(score)

            msg = " ".join(f"{k}={v:.4f}" for k, v in scores.items())
            mem = ""
            if self.device.type == "cuda":
                mem = f" peak_mem={torch.cuda.max_memory_allocated(self.device) / 2**20:.0f}MiB"
                torch.cuda.reset_peak_memory_stats(self.device)
            log.info("epoch %d train_loss %.4f dev %s (%.1fs)%s", epoch, train_loss, msg, time.time() - t0, mem)

            if score > self.best_score:
                self.best_score = score
                bad_epochs = 0
                state = self.model.module.state_dict() if isinstance(self.model, nn.DataParallel) else self.model.state_dict()
                torch.save({"model": state, "epoch": epoch, "scores": scores}, self.best_path)
            else:
                bad_epochs += 1
                if bad_epochs >= self.cfg.patience:
                    log.info("early stopping after %d epochs without improvement", bad_epochs)
                    break

        ckpt = torch.load(self.best_path, map_location=self.device)
        target = self.model.module if isinstance(self.model, nn.DataParallel) else self.model
        target.load_state_dict(ckpt["model"])
        return self.best_score
