#!/usr/bin/env python
"""Train an N2V2 denoiser on an SEM stack with PyTorch Lightning (CAREamics-style layout).

    python examples/train_n2v2_sem.py --config configs/n2v2_sem.yml --data data/sem_train.tif
"""
import argparse
import os
from pathlib import Path

import numpy as np
import tifffile
import torch
import yaml
import pytorch_lightning as L
from pytorch_lightning.callbacks import ModelCheckpoint, LearningRateMonitor, EarlyStopping
from pytorch_lightning.loggers import TensorBoardLogger, WandbLogger
from pytorch_lightning.strategies import DDPStrategy
from torch.utils.data import DataLoader

from careamics_lite.lightning import N2VModule, N2VDataModule
from careamics_lite.prediction import predict_tiled, stitch_prediction


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--config", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--val", default=None)
    p.add_argument("--work_dir", default="runs/n2v2_sem")
    p.add_argument("--predict", default=None, help="optional stack to denoise after training")
    p.add_argument("--devices", default=None, help="override trainer.devices, e.g. '0,1'")
    return p.parse_args()


def build_trainer(cfg, work_dir, devices=None):
    tcfg = cfg["training"]
    callbacks = [
        ModelCheckpoint(dirpath=work_dir / "checkpoints", filename="{epoch}-{val_loss:.4f}",
                        monitor="val_loss", save_top_k=3, save_last=True),
        LearningRateMonitor(logging_interval="epoch"),
    ]
    if tcfg.get("early_stopping_patience"):
        callbacks.append(EarlyStopping("val_loss", patience=tcfg["early_stopping_patience"]))

    loggers = [TensorBoardLogger(work_dir, name="tb")]
    if tcfg.get("use_wandb"):
        loggers.append(WandbLogger(project="careamics", save_dir=work_dir))

    n_gpus = torch.cuda.device_count()
    strategy = "auto"
    if n_gpus > 1:
        strategy = DDPStrategy(process_group_backend="nccl", find_unused_parameters=False)

    return L.Trainer(
        accelerator="gpu" if torch.cuda.is_available() else "cpu",
        devices=devices or tcfg.get("devices", "auto"),
        strategy=strategy,
        precision=tcfg.get("precision", "16-mixed"),
        max_epochs=tcfg["num_epochs"],
        gradient_clip_val=tcfg.get("gradient_clip", None),
        callbacks=callbacks,
        logger=loggers,
        log_every_n_steps=10,
        benchmark=True,
    )


def main():
    args = parse_args()
    work_dir = Path(args.work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    cfg = yaml.safe_load(open(args.config))
    L.seed_everything(cfg.get("seed", 42), workers=True)
    torch.set_float32_matmul_precision("high")

    train = tifffile.imread(args.data).astype(np.float32)
    val = tifffile.imread(args.val).astype(np.float32) if args.val else None

    dm = N2VDataModule(
        train_data=train, val_data=val,
        patch_size=cfg["data"]["patch_size"], axes=cfg["data"]["axes"],
        batch_size=cfg["training"]["batch_size"],
        num_workers=cfg["data"].get("num_workers", 4),
        pin_memory=torch.cuda.is_available(),
        val_percentage=cfg["data"].get("val_percentage", 0.1),
    )
    model = N2VModule(
        algorithm=cfg["algorithm"]["name"],
        depth=cfg["algorithm"]["model"]["depth"],
        num_channels_init=cfg["algorithm"]["model"]["num_channels_init"],
        use_n2v2=cfg["algorithm"]["model"].get("n2v2", True),
        masked_pixel_percentage=cfg["algorithm"]["masked_pixel_percentage"],
        roi_size=cfg["algorithm"]["roi_size"],
        lr=cfg["training"]["optimizer"]["lr"],
        fused_optimizer=cfg["training"]["optimizer"].get("fused", False),
    )

    devices = [int(d) for d in args.devices.split(",")] if args.devices else None
    trainer = build_trainer(cfg, work_dir, devices)
    trainer.fit(model, datamodule=dm)

    if args.predict and trainer.is_global_zero:
        stack = tifffile.imread(args.predict).astype(np.float32)
        device = torch.device("cuda:0")
        model = N2VModule.load_from_checkpoint(trainer.checkpoint_callback.best_model_path).to(device)
        model.eval()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            tiles = predict_tiled(model, stack, tile_size=cfg["prediction"]["tile_size"],
                                  tile_overlap=cfg["prediction"]["tile_overlap"], device=device)
        pred = stitch_prediction(tiles, stack.shape)
        out = work_dir / (Path(args.predict).stem + "_n2v2.tif")
        tifffile.imwrite(out, pred.astype(np.float32))
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
