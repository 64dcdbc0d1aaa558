"""PetFinder.my - Pawpularity Contest: Swin-L 384 regression with PyTorch Lightning.

    python -m pawpularity.train_pl --config configs/pawpularity_swin.yaml trainer.devices=[0,1]

Targets are scaled to [0, 1] and trained with BCE (better than MSE on this metric), mixup on the
image + target, 10 StratifiedKFold folds over binned Pawpularity. Test-time: hflip TTA.
"""
import argparse
import glob
import os

import numpy as np
import pandas as pd
import pytorch_lightning as pl
import timm
import torch
import torch.nn as nn
import torchvision.transforms as T
from omegaconf import OmegaConf
from pytorch_lightning.callbacks import EarlyStopping, LearningRateMonitor, ModelCheckpoint
from pytorch_lightning.loggers import CSVLogger
from pytorch_lightning.strategies import DDPStrategy
from sklearn.model_selection import StratifiedKFold
from torch.utils.data import DataLoader, Dataset
from torchvision.io import read_image

IMAGENET_MEAN = [0.485, 0.456, 0.406]
IMAGENET_STD = [0.229, 0.224, 0.225]


class PetDataset(Dataset):
    def __init__(self, df, image_size=384, train=True):
        self.paths = df["path"].values
        self.targets = df["Pawpularity"].values / 100.0 if "Pawpularity" in df else np.zeros(len(df))
        aug = [T.RandomHorizontalFlip(), T.RandomVerticalFlip(), T.RandomAffine(15, translate=(0.1, 0.1),
               scale=(0.9, 1.1)), T.ColorJitter(0.1, 0.1, 0.1)] if train else []
        self.tf = T.Compose([T.Resize([image_size, image_size])] + aug +
                            [T.ConvertImageDtype(torch.float), T.Normalize(IMAGENET_MEAN, IMAGENET_STD)])

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        img = read_image(self.paths[i])
        return self.tf(img), torch.tensor(self.targets[i], dtype=torch.float32)


class PetDataModule(pl.LightningDataModule):
    def __init__(self, trn_df, val_df, cfg):
        super().__init__()
        self.trn_df, self.val_df, self.cfg = trn_df, val_df, cfg

    def train_dataloader(self):
        return DataLoader(PetDataset(self.trn_df, self.cfg.model.image_size, True),
                          batch_size=self.cfg.train.batch_size, shuffle=True, drop_last=True,
                          num_workers=self.cfg.train.num_workers, pin_memory=self.cfg.train.pin_memory)

    def val_dataloader(self):
        return DataLoader(PetDataset(self.val_df, self.cfg.model.image_size, False),
                          batch_size=self.cfg.train.batch_size * 2, shuffle=False,
                          num_workers=self.cfg.train.num_workers, pin_memory=self.cfg.train.pin_memory)


def mixup(x, y, alpha=0.5):
    lam = np.random.beta(alpha, alpha)
    idx = torch.randperm(x.size(0), device=x.device)
    return lam * x + (1 - lam) * x[idx], y, y[idx], lam


class PawpularityModel(pl.LightningModule):
    def __init__(self, cfg):
        super().__init__()
        self.save_hyperparameters(OmegaConf.to_container(cfg, resolve=True))
        self.cfg = cfg
        self.backbone = timm.create_model(cfg.model.name, pretrained=True, num_classes=0, in_chans=3)
        self.fc = nn.Sequential(nn.Dropout(cfg.model.dropout), nn.Linear(self.backbone.num_features, 1))
        self.criterion = nn.BCEWithLogitsLoss()

    def forward(self, x):
        return self.fc(self.backbone(x)).squeeze(-1)

    def training_step(self, batch, batch_idx):
        images, targets = batch
        if torch.rand(1).item() < self.cfg.train.mixup_p:
            images, t_a, t_b, lam = mixup(images, targets, self.cfg.train.mixup_alpha)
            logits = self(images)
            loss = lam * self.criterion(logits, t_a) + (1 - lam) * self.criterion(logits, t_b)
        else:
            loss = self.criterion(self(images), targets)
        self.log("train_loss", loss, prog_bar=True, on_step=True, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        images, targets = batch
        logits = self(images)
        loss = self.criterion(logits, targets)
        preds = torch.sigmoid(logits) * 100.0
        rmse = torch.sqrt(((preds - targets * 100.0) ** 2).mean())
        self.log("val_loss", loss, sync_dist=True)
        self.log("val_rmse", rmse, prog_bar=True, sync_dist=True)

    def on_train_epoch_end(self):
        if self.global_rank == 0:
            peak = torch.cuda.max_memory_reserved() / 2 ** 30
            self.print(f"epoch {self.current_epoch}: peak reserved {peak:.1f} GiB")

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.cfg.optimizer.lr, weight_decay=self.cfg.optimizer.wd)
        sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=self.cfg.scheduler.T_0,
                                                                     eta_min=self.cfg.scheduler.eta_min)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "epoch"}}


def make_folds(df, n_folds, seed):
    df["fold"] = -1
    bins = int(np.floor(1 + np.log2(len(df))))
    df["bins"] = pd.cut(df["Pawpularity"], bins=bins, labels=False)
    skf = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
    for fold, (_, val_idx) in enumerate(skf.split(df, df["bins"])):
        df.loc[val_idx, "fold"] = fold
    return df


@torch.no_grad()
def predict_test(cfg, ckpt_paths, test_df):
    loader = DataLoader(PetDataset(test_df, cfg.model.image_size, False), batch_size=64, num_workers=4)
    preds = np.zeros(len(test_df))
    for path in ckpt_paths:
        model = PawpularityModel.load_from_checkpoint(path, cfg=cfg).to("cuda").eval()
        fold_pred = []
        for images, _ in loader:
            images = images.to(model.device)
            out = (torch.sigmoid(model(images)) + torch.sigmoid(model(images.flip(-1)))) / 2
            fold_pred.append(out.float().cpu().numpy() * 100.0)
        preds += np.concatenate(fold_pred) / len(ckpt_paths)
        del model
    return preds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args()
    cfg = OmegaConf.merge(OmegaConf.load(args.config), OmegaConf.from_dotlist(args.overrides))
    pl.seed_everything(cfg.seed, workers=True)
    torch.set_float32_matmul_precision("medium")

    df = pd.read_csv(os.path.join(cfg.data.root, "train.csv"))
    df["path"] = df["Id"].map(lambda x: os.path.join(cfg.data.root, "train", f"{x}.jpg"))
    df = make_folds(df, cfg.train.n_folds, cfg.seed)
    for fold in cfg.train.folds:
        trn_df = df[df.fold != fold].reset_index(drop=True)
        val_df = df[df.fold == fold].reset_index(drop=True)
        dm = PetDataModule(trn_df, val_df, cfg)
        model = PawpularityModel(cfg)
        ckpt = ModelCheckpoint(dirpath=cfg.output_dir, filename=f"{cfg.model.name}_fold{fold}_" + "{val_rmse:.4f}",
                               monitor="val_rmse", mode="min", save_top_k=1, save_weights_only=True)
        n_dev = len(cfg.trainer.devices) if OmegaConf.is_list(cfg.trainer.devices) else int(cfg.trainer.devices)
        strategy = DDPStrategy(process_group_backend="nccl", find_unused_parameters=False) if n_dev > 1 else "auto"
        trainer = pl.Trainer(
            accelerator=cfg.trainer.accelerator,
            devices=cfg.trainer.devices,
            strategy=strategy,
            precision=cfg.trainer.precision,
            max_epochs=cfg.train.epochs,
            accumulate_grad_batches=cfg.train.accumulate,
            gradient_clip_val=cfg.train.clip,
            sync_batchnorm=cfg.trainer.sync_batchnorm,
            benchmark=cfg.trainer.benchmark,
            logger=CSVLogger(cfg.output_dir, name=f"fold{fold}"),
            callbacks=[ckpt, LearningRateMonitor("epoch"), EarlyStopping("val_rmse", patience=3, mode="min")],
            log_every_n_steps=20,
        )
        trainer.fit(model, datamodule=dm)

    if cfg.get("predict_test", False):
        test = pd.read_csv(os.path.join(cfg.data.root, "test.csv"))
        test["path"] = test["Id"].map(lambda x: os.path.join(cfg.data.root, "test", f"{x}.jpg"))
        paths = sorted(glob.glob(os.path.join(cfg.output_dir, f"{cfg.model.name}_fold*.ckpt")))
        test["Pawpularity"] = predict_test(cfg, paths, test)
        test[["Id", "Pawpularity"]].to_csv(os.path.join(cfg.output_dir, "submission.csv"), index=False)


if __name__ == "__main__":
    main()
