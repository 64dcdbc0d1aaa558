# Copyright (c) MONAI Consortium
# Licensed under the Apache License, Version 2.0 (the "License");
#     http://www.apache.org/licenses/LICENSE-2.0
"""Endoscopic tool segmentation with a FlexibleUNet (EfficientNet-B2 encoder).

Fast-training recipe: CacheDataset + ThreadDataLoader, all random transforms on the GPU after
`ToDeviced`, automatic mixed precision and `torch.backends.cudnn.benchmark`.

    python scripts/train_tool_seg.py --data_dir /data/endoscopic_tool_dataset --amp --cache_rate 1.0
"""
import argparse
import glob
import logging
import os
import sys
import time
from contextlib import nullcontext

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter

import monai
from monai.config import print_config
from monai.data import CacheDataset, ThreadDataLoader, decollate_batch
from monai.inferers import SimpleInferer
from monai.losses import DiceLoss
from monai.metrics import DiceMetric
from monai.networks.nets import FlexibleUNet
from monai.transforms import (
    Activations,
    AsDiscrete,
    AsDiscreted,
    Compose,
    EnsureChannelFirstd,
    EnsureTyped,
    LoadImaged,
    Lambdad,
    RandAdjustContrastd,
    RandAffined,
    RandFlipd,
    RandGaussianNoised,
    RandZoomd,
    Resized,
    ScaleIntensityd,
    ToDeviced,
)
from monai.utils import set_determinism


def parse_args():
    parser = argparse.ArgumentParser(description="MONAI endoscopic tool segmentation")
    parser.add_argument("--data_dir", type=str, required=True)
    parser.add_argument("--output_dir", type=str, default="./models")
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--val_interval", type=int, default=1)
    parser.add_argument("--cache_rate", type=float, default=1.0)
    parser.add_argument("--num_workers", type=int, default=4)
    parser.add_argument("--amp", action="store_true", help="use torch.cuda.amp mixed precision")
    parser.add_argument("--nvtx", action="store_true", help="emit NVTX ranges for Nsight Systems")
    parser.add_argument("--gpu", type=int, default=0, help="CUDA device index")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def get_files(data_dir, split):
    images = sorted(glob.glob(os.path.join(data_dir, split, "*", "*.jpg")))
    labels = [img.replace(".jpg", "_seg.png") for img in images]
    return [{"image": i, "label": l} for i, l in zip(images, labels) if os.path.exists(l)]


def build_transforms(device):
    keys = ["image", "label"]
    train = Compose(
        [
            LoadImaged(keys=keys, image_only=True),
            EnsureChannelFirstd(keys=keys),
            Lambdad(keys="label", func=lambda x: x[:1]),
            Resized(keys=keys, spatial_size=(736, 480), mode=("bilinear", "nearest")),
            ScaleIntensityd(keys="image"),
            EnsureTyped(keys=keys, track_meta=False),
            # everything below runs on the GPU
            ToDeviced(keys=keys, device=device),
            RandAffined(
                keys=keys,
                prob=0.5,
                rotate_range=np.pi / 12,
                translate_range=(10, 10),
                scale_range=(0.1, 0.1),
                mode=("bilinear", "nearest"),
                padding_mode="zeros",
            ),
            RandZoomd(keys=keys, prob=0.3, min_zoom=0.9, max_zoom=1.2, mode=("bilinear", "nearest")),
            RandFlipd(keys=keys, prob=0.5, spatial_axis=0),
            RandFlipd(keys=keys, prob=0.5, spatial_axis=1),
            RandGaussianNoised(keys="image", prob=0.15, std=0.01),
            RandAdjustContrastd(keys="image", prob=0.3, gamma=(0.7, 1.5)),
            AsDiscreted(keys="label", threshold=0.5),
        ]
    )
    val = Compose(
        [
            LoadImaged(keys=keys, image_only=True),
            EnsureChannelFirstd(keys=keys),
            Lambdad(keys="label", func=lambda x: x[:1]),
            Resized(keys=keys, spatial_size=(736, 480), mode=("bilinear", "nearest")),
            ScaleIntensityd(keys="image"),
            EnsureTyped(keys=keys, track_meta=False),
            ToDeviced(keys=keys, device=device),
            AsDiscreted(keys="label", threshold=0.5),
        ]
    )
    return train, val


def main():
    args = parse_args()
    logging.basicConfig(stream=sys.stdout, level=logging.INFO)
    print_config()
    set_determinism(seed=args.seed)

    if not torch.cuda.is_available():
        raise SystemExit("this recipe needs a CUDA GPU (ToDeviced + ThreadDataLoader)")
    device = torch.device(f"cuda:{args.gpu}")
    torch.cuda.set_device(device)
    torch.backends.cudnn.benchmark = True

    train_files = get_files(args.data_dir, "train")
    val_files = get_files(args.data_dir, "val")
    logging.info(f"{len(train_files)} training / {len(val_files)} validation frames")

    train_tf, val_tf = build_transforms(device)
    train_ds = CacheDataset(train_files, transform=train_tf, cache_rate=args.cache_rate,
                            num_workers=args.num_workers, copy_cache=False)
    val_ds = CacheDataset(val_files, transform=val_tf, cache_rate=args.cache_rate,
                          num_workers=args.num_workers // 2, copy_cache=False)
    # num_workers=0 is required with ToDeviced: the CUDA context cannot be forked
    train_loader = ThreadDataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=0)
    val_loader = ThreadDataLoader(val_ds, batch_size=1, num_workers=0)

    model = FlexibleUNet(
        in_channels=3,
        out_channels=1,
        backbone="efficientnet-b2",
        pretrained=True,
        is_pad=False,
    ).to(device)

    loss_function = DiceLoss(sigmoid=True, squared_pred=True, smooth_nr=0.0, smooth_dr=1e-6)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    lr_scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    dice_metric = DiceMetric(include_background=True, reduction="mean")
    post_pred = Compose([Activations(sigmoid=True), AsDiscrete(threshold=0.5)])
    inferer = SimpleInferer()

    os.makedirs(args.output_dir, exist_ok=True)
    writer = SummaryWriter(log_dir=os.path.join(args.output_dir, "tb"))
    best_metric, best_metric_epoch = -1, -1
    total_start = time.time()

    for epoch in range(args.epochs):
        if args.nvtx:
            torch.cuda.nvtx.range_push(f"epoch {epoch}")
        epoch_start = time.time()
        model.train()
        epoch_loss = 0
        step = 0
        for batch_data in train_loader:
            step += 1
            inputs, labels = batch_data["image"], batch_data["label"]
            optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=args.amp):
                outputs = model(inputs)
                loss = loss_function(outputs, labels)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            epoch_loss += loss.item()
        lr_scheduler.step()
        epoch_loss /= step
        writer.add_scalar("train_loss", epoch_loss, epoch + 1)
        if args.nvtx:
            torch.cuda.nvtx.range_pop()

        if (epoch + 1) % args.val_interval == 0:
            model.eval()
            with torch.no_grad():
                amp_ctx = torch.autocast(device_type="cuda", dtype=torch.float16) if args.amp else nullcontext()
                for val_data in val_loader:
                    val_inputs, val_labels = val_data["image"], val_data["label"]
                    with amp_ctx:
                        val_outputs = inferer(val_inputs, model)
                    val_outputs = [post_pred(i) for i in decollate_batch(val_outputs)]
                    dice_metric(y_pred=val_outputs, y=decollate_batch(val_labels))
                metric = dice_metric.aggregate().item()
                dice_metric.reset()
                writer.add_scalar("val_mean_dice", metric, epoch + 1)
                if metric > best_metric:
                    best_metric = metric
                    best_metric_epoch = epoch + 1
                    torch.save(model.state_dict(), os.path.join(args.output_dir, "model.pt"))
                    logging.info("saved new best metric model")
                logging.info(
                    f"epoch {epoch + 1} loss {epoch_loss:.4f} dice {metric:.4f} "
                    f"best {best_metric:.4f}@{best_metric_epoch} "
                    f"time {time.time() - epoch_start:.1f}s "
                    f"mem {torch.cuda.max_memory_allocated(device) / 1024 ** 3:.1f}G"
                )

    logging.info(f"train completed, best_metric: {best_metric:.4f} at epoch: {best_metric_epoch}, "
                 f"total time: {time.time() - total_start:.1f}s")
    writer.close()


if __name__ == "__main__":
    main()
