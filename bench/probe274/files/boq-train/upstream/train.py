"""
Bag-of-Queries (BoQ) training on GSV-Cities with Lightning 2.x.

    python train.py --backbone dinov2 --batch_size 160 --max_epochs 40

All visible GPUs are used (DDP) unless --devices is given.
"""
import argparse
import os

import lightning as L
import torch
from lightning.pytorch.callbacks import LearningRateMonitor, ModelCheckpoint, RichProgressBar
from lightning.pytorch.loggers import TensorBoardLogger

from src.boq import BoQ
from src.backbones import DinoV2, ResNet
from src.dataloaders.GSVCitiesDataModule import GSVCitiesDataModule
from src.vpr_framework import VPRFramework


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backbone", type=str, default="dinov2", choices=["dinov2", "resnet50"])
    parser.add_argument("--batch_size", type=int, default=160)
    parser.add_argument("--img_per_place", type=int, default=4)
    parser.add_argument("--image_size", type=int, nargs=2, default=[224, 224])
    parser.add_argument("--max_epochs", type=int, default=40)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--weight_decay", type=float, default=1e-3)
    parser.add_argument("--num_workers", type=int, default=8)
    parser.add_argument("--devices", type=int, default=None, help="number of GPUs (default: all visible)")
    parser.add_argument("--compile", action="store_true", help="torch.compile the backbone")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out_dir", type=str, default="./logs")
    return parser.parse_args()


def build_model(args):
    if args.backbone == "dinov2":
        backbone = DinoV2(backbone_name="dinov2_vitb14", num_unfrozen_blocks=2)
        aggregator = BoQ(in_channels=backbone.out_channels, proj_channels=384, num_queries=64,
                         num_layers=2, row_dim=12288 // 384)
    else:
        backbone = ResNet(backbone_name="resnet50", crop_last_block=True, num_unfrozen_blocks=2)
        aggregator = BoQ(in_channels=backbone.out_channels, proj_channels=512, num_queries=64,
                         num_layers=2, row_dim=32)
    if args.compile:
        backbone = torch.compile(backbone)
    return VPRFramework(backbone=backbone, aggregator=aggregator, lr=args.lr, weight_decay=args.weight_decay,
                        warmup_epochs=5, loss_name="MultiSimilarityLoss", miner_name="MultiSimilarityMiner",
                        miner_margin=0.1, faiss_gpu=False)


def main():
    args = get_args()
    L.seed_everything(args.seed, workers=True)
    torch.set_float32_matmul_precision("high")

    datamodule = GSVCitiesDataModule(
        batch_size=args.batch_size,
        img_per_place=args.img_per_place,
        min_img_per_place=4,
        shuffle_all=False,
        random_sample_from_each_place=True,
        image_size=tuple(args.image_size),
        num_workers=args.num_workers,
        show_data_stats=True,
        val_set_names=["pitts30k_val", "msls_val"],
    )
    model = build_model(args)

    checkpoint_cb = ModelCheckpoint(
        monitor="pitts30k_val/R1",
        filename=f"{args.backbone}_boq" + "_epoch({epoch:02d})_R1[{pitts30k_val/R1:.4f}]_R5[{msls_val/R5:.4f}]",
        auto_insert_metric_name=False,
        save_weights_only=True,
        save_top_k=3,
        mode="max",
    )

    num_devices = args.devices if args.devices is not None else torch.cuda.device_count()
    strategy = "ddp_find_unused_parameters_true" if num_devices > 1 else "auto"

    trainer = L.Trainer(
        accelerator="cuda",
        devices=num_devices,
        strategy=strategy,
        precision="bf16-mixed",
        benchmark=True,
        max_epochs=args.max_epochs,
        check_val_every_n_epoch=1,
        num_sanity_val_steps=0,
        reload_dataloaders_every_n_epochs=1,
        log_every_n_steps=20,
        logger=TensorBoardLogger(save_dir=args.out_dir, name=f"boq_{args.backbone}", default_hp_metric=False),
        callbacks=[checkpoint_cb, LearningRateMonitor(logging_interval="step"), RichProgressBar()],
    )
    trainer.fit(model=model, datamodule=datamodule)


if __name__ == "__main__":
    main()
