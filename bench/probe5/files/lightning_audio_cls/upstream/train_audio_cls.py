"""
Audio event classification (ESC-50 / UrbanSound-style folds) with PyTorch Lightning.

Log-mel front end computed on the accelerator, SpecAugment, an EfficientNet-like CNN on the
mel image, mixup, and DDP across all local devices with 16-bit mixed precision.

    python train_audio_cls.py --data-root /data/esc50 --fold 1 --epochs 60
"""
import argparse
import os

import lightning.pytorch as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchaudio
from lightning.pytorch.callbacks import LearningRateMonitor, ModelCheckpoint
from lightning.pytorch.loggers import TensorBoardLogger
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader, Dataset

from audio_cls.data import ESC50Folds
from audio_cls.models import build_backbone


class LogMel(nn.Module):
    def __init__(self, sample_rate=44100, n_fft=2048, hop=512, n_mels=128):
        super().__init__()
        self.mel = torchaudio.transforms.MelSpectrogram(sample_rate=sample_rate, n_fft=n_fft, hop_length=hop,
                                                        n_mels=n_mels, f_min=20, f_max=sample_rate // 2)
        self.db = torchaudio.transforms.AmplitudeToDB(top_db=80)

    def forward(self, wav):
        with torch.autocast(device_type=wav.device.type, enabled=False):
            return self.db(self.mel(wav.float()))


class SpecAugment(nn.Module):
    def __init__(self, freq_mask=24, time_mask=48, n=2):
        super().__init__()
        self.masks = nn.Sequential(*[m for _ in range(n) for m in (
            torchaudio.transforms.FrequencyMasking(freq_mask), torchaudio.transforms.TimeMasking(time_mask))])

    def forward(self, spec):
        return self.masks(spec) if self.training else spec


class AudioClassifier(pl.LightningModule):
    def __init__(self, num_classes=50, lr=1e-3, weight_decay=1e-4, mixup_alpha=0.4, backbone="effnet_b0"):
        super().__init__()
        self.save_hyperparameters()
        self.frontend = LogMel()
        self.augment = SpecAugment()
        self.backbone = build_backbone(backbone, in_chans=1, num_classes=num_classes)

    def forward(self, wav):
        spec = self.frontend(wav).unsqueeze(1)
        spec = (spec - spec.mean(dim=(2, 3), keepdim=True)) / (spec.std(dim=(2, 3), keepdim=True) + 1e-5)
        return self.backbone(self.augment(spec))

    def _mixup(self, wav, y):
        lam = torch.distributions.Beta(self.hparams.mixup_alpha, self.hparams.mixup_alpha).sample().to(wav.device)
        perm = torch.randperm(wav.shape[0], device=wav.device)
        y1 = F.one_hot(y, self.hparams.num_classes).float()
        return lam * wav + (1 - lam) * wav[perm], lam * y1 + (1 - lam) * y1[perm]

    def training_step(self, batch, batch_idx):
        wav, y = batch
        wav, y_soft = self._mixup(wav, y)
        logits = self(wav)
        loss = torch.sum(-y_soft * F.log_softmax(logits, dim=-1), dim=-1).mean()
        self.log("train/loss", loss, on_step=True, on_epoch=True, prog_bar=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        wav, y = batch
        logits = self(wav)
        loss = F.cross_entropy(logits, y)
        acc = (logits.argmax(-1) == y).float().mean()
        self.log_dict({"val/loss": loss, "val/acc": acc}, on_epoch=True, prog_bar=True, sync_dist=True)

    def on_validation_epoch_end(self):
        # the mel front end allocates large temporaries at eval batch size
        torch.cuda.empty_cache()

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=self.hparams.weight_decay)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=self.hparams.lr,
                                                    total_steps=self.trainer.estimated_stepping_batches,
                                                    pct_start=0.1)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


class ESC50DataModule(pl.LightningDataModule):
    def __init__(self, root, fold, batch_size=32, num_workers=8):
        super().__init__()
        self.root, self.fold = root, fold
        self.batch_size, self.num_workers = batch_size, num_workers

    def setup(self, stage=None):
        self.train_set = ESC50Folds(self.root, folds=[f for f in range(1, 6) if f != self.fold], train=True)
        self.val_set = ESC50Folds(self.root, folds=[self.fold], train=False)

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True, num_workers=self.num_workers,
                          pin_memory=True, drop_last=True, persistent_workers=True)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=2 * self.batch_size, num_workers=self.num_workers,
                          pin_memory=True, persistent_workers=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-root", required=True)
    ap.add_argument("--fold", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--devices", type=int, default=torch.cuda.device_count())
    ap.add_argument("--out", default="runs/audio_cls")
    args = ap.parse_args()

    pl.seed_everything(1234 + args.fold, workers=True)
    torch.set_float32_matmul_precision("high")

    model = AudioClassifier(lr=args.lr)
    data = ESC50DataModule(args.data_root, args.fold, batch_size=args.batch_size)
    ckpt = ModelCheckpoint(dirpath=os.path.join(args.out, f"fold{args.fold}"), monitor="val/acc", mode="max",
                           save_top_k=1, save_last=True)
    trainer = pl.Trainer(
        accelerator="gpu",
        devices=args.devices,
        strategy=DDPStrategy(process_group_backend="nccl", find_unused_parameters=False, static_graph=True),
        precision="16-mixed",
        max_epochs=args.epochs,
        gradient_clip_val=1.0,
        log_every_n_steps=20,
        callbacks=[ckpt, LearningRateMonitor(logging_interval="step")],
        logger=TensorBoardLogger(args.out, name=f"fold{args.fold}"),
    )
    trainer.fit(model, datamodule=data)
    print(f"best val/acc {ckpt.best_model_score:.4f} at {ckpt.best_model_path}")


if __name__ == "__main__":
    main()
