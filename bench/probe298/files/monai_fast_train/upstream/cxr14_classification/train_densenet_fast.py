# Copyright (c) MONAI Consortium
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#     http://www.apache.org/licenses/LICENSE-2.0
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
Fast multi-label training of a 2D DenseNet121 on NIH ChestX-ray14 with MONAI.

Follows the recipe of the MONAI "fast training" tutorial:
  * deterministic transforms are cached by ``CacheDataset``;
  * the cached tensors are moved to the GPU once with ``ToDeviced`` so that the random
    augmentations run on the GPU and ``ThreadDataLoader`` (no worker processes) can feed it;
  * automatic mixed precision via ``torch.cuda.amp``;
  * Novograd with a 10x larger learning rate.

Usage:
    python train_densenet_fast.py --data_dir /data/cxr14 --fast --amp
"""

import argparse
import logging
import os
import sys
import time

import numpy as np
import pandas as pd
import torch

import monai
from monai.config import print_config
from monai.data import CacheDataset, DataLoader, ThreadDataLoader, decollate_batch, set_track_meta
from monai.metrics import ROCAUCMetric
from monai.networks.nets import DenseNet121
from monai.optimizers import Novograd
from monai.transforms import (
    Activations,
    Compose,
    EnsureChannelFirstd,
    EnsureTyped,
    LoadImaged,
    RandAffined,
    RandFlipd,
    RandGaussianNoised,
    Resized,
    ScaleIntensityd,
    ToDeviced,
)
from monai.utils import set_determinism

CLASSES = [
    "Atelectasis", "Cardiomegaly", "Effusion", "Infiltration", "Mass", "Nodule", "Pneumonia",
    "Pneumothorax", "Consolidation", "Edema", "Emphysema", "Fibrosis", "Pleural_Thickening", "Hernia",
]


def parse_args():
    parser = argparse.ArgumentParser(description="MONAI fast DenseNet121 training on ChestX-ray14")
    parser.add_argument("--data_dir", default="/workspace/data/cxr14", type=str)
    parser.add_argument("--out_dir", default="./runs/densenet121_fast", type=str)
    parser.add_argument("--max_epochs", default=30, type=int)
    parser.add_argument("--batch_size", default=64, type=int)
    parser.add_argument("--lr", default=1e-4, type=float)
    parser.add_argument("--image_size", default=256, type=int)
    parser.add_argument("--val_interval", default=1, type=int)
    parser.add_argument("--cache_rate", default=1.0, type=float)
    parser.add_argument("--fast", action="store_true", help="cache on GPU + ThreadDataLoader + Novograd")
    parser.add_argument("--amp", action="store_true", help="enable torch.cuda.amp")
    parser.add_argument("--seed", default=0, type=int)
    return parser.parse_args()


def build_file_lists(data_dir):
    df = pd.read_csv(os.path.join(data_dir, "Data_Entry_2017.csv"))
    with open(os.path.join(data_dir, "train_val_list.txt")) as f:
        train_val = set(l.strip() for l in f)
    with open(os.path.join(data_dir, "test_list.txt")) as f:
        test = set(l.strip() for l in f)

    def encode(findings):
        labels = findings.split("|")
        return np.array([1.0 if c in labels else 0.0 for c in CLASSES], dtype=np.float32)

    items = []
    for _, row in df.iterrows():
        items.append({
            "image": os.path.join(data_dir, "images", row["Image Index"]),
            "label": encode(row["Finding Labels"]),
            "split": "test" if row["Image Index"] in test else ("train" if row["Image Index"] in train_val else "skip"),
            "patient": row["Patient ID"],
        })
    train_val_items = [i for i in items if i["split"] == "train"]
    patients = sorted({i["patient"] for i in train_val_items})
    rng = np.random.RandomState(0)
    rng.shuffle(patients)
    val_patients = set(patients[: len(patients) // 10])
    train_files = [{"image": i["image"], "label": i["label"]} for i in train_val_items if i["patient"] not in val_patients]
    val_files = [{"image": i["image"], "label": i["label"]} for i in train_val_items if i["patient"] in val_patients]
    return train_files, val_files


def main():
    args = parse_args()
    logging.basicConfig(stream=sys.stdout, level=logging.INFO)
    print_config()
    set_determinism(seed=args.seed)
    os.makedirs(args.out_dir, exist_ok=True)

    train_files, val_files = build_file_lists(args.data_dir)
    print(f"training: {len(train_files)} images, validation: {len(val_files)} images")

    device = torch.device("cuda:0")
    torch.backends.cudnn.benchmark = True

    # caching the whole CXR14 train split at 256x256 needs ~7GB; fall back to partial caching on small cards
    total_mem = torch.cuda.get_device_properties(0).total_memory
    cache_rate = args.cache_rate if total_mem > 20 * 1024 ** 3 else min(args.cache_rate, 0.5)

    deterministic = [
        LoadImaged(keys="image", image_only=True),
        EnsureChannelFirstd(keys="image"),
        Resized(keys="image", spatial_size=(args.image_size, args.image_size)),
        ScaleIntensityd(keys="image"),
        EnsureTyped(keys=["image", "label"], track_meta=False),
    ]
    if args.fast:
        # move the cached data to GPU once, then run the random transforms on GPU
        deterministic.append(ToDeviced(keys=["image", "label"], device=device))
    train_transforms = Compose(deterministic + [
        RandAffined(keys="image", prob=0.5, rotate_range=np.pi / 18, scale_range=0.1, padding_mode="zeros"),
        RandFlipd(keys="image", spatial_axis=1, prob=0.5),
        RandGaussianNoised(keys="image", prob=0.2, std=0.01),
    ])
    val_transforms = Compose(deterministic)

    if args.fast:
        set_track_meta(False)
        train_ds = CacheDataset(data=train_files, transform=train_transforms, cache_rate=cache_rate,
                                num_workers=8, copy_cache=False)
        val_ds = CacheDataset(data=val_files, transform=val_transforms, cache_rate=cache_rate,
                              num_workers=5, copy_cache=False)
        # disable multi-workers because `ThreadDataLoader` works with multi-threads
        train_loader = ThreadDataLoader(train_ds, num_workers=0, batch_size=args.batch_size, shuffle=True)
        val_loader = ThreadDataLoader(val_ds, num_workers=0, batch_size=args.batch_size)
    else:
        use_pin = torch.cuda.is_available()
        train_ds = CacheDataset(data=train_files, transform=train_transforms, cache_rate=cache_rate, num_workers=8)
        val_ds = CacheDataset(data=val_files, transform=val_transforms, cache_rate=cache_rate, num_workers=4)
        train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=8,
                                  pin_memory=use_pin)
        val_loader = DataLoader(val_ds, batch_size=args.batch_size, num_workers=4,
                                pin_memory=use_pin)

    model = DenseNet121(spatial_dims=2, in_channels=1, out_channels=len(CLASSES), pretrained=False).to(device)

    labels = np.stack([f["label"] for f in train_files])
    pos = labels.sum(0).clip(min=1)
    pos_weight = torch.as_tensor((labels.shape[0] - pos) / pos, dtype=torch.float32)
    loss_function = torch.nn.BCEWithLogitsLoss(pos_weight=pos_weight.to(device))

    if args.fast:
        optimizer = Novograd(model.parameters(), args.lr * 10)
    else:
        optimizer = torch.optim.Adam(model.parameters(), args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.max_epochs)
    scaler = torch.cuda.amp.GradScaler() if args.amp else None

    auc_metric = ROCAUCMetric(average="macro")
    post_pred = Compose([Activations(sigmoid=True)])

    best_metric = -1
    best_metric_epoch = -1
    epoch_times = []
    total_start = time.time()
    for epoch in range(args.max_epochs):
        epoch_start = time.time()
        print("-" * 10)
        print(f"epoch {epoch + 1}/{args.max_epochs}")
        model.train()
        epoch_loss = 0
        step = 0
        for batch_data in train_loader:
            step += 1
            inputs, targets = batch_data["image"].to(device), batch_data["label"].to(device)
            optimizer.zero_grad()
            if args.amp and scaler is not None:
                with torch.cuda.amp.autocast():
                    outputs = model(inputs)
                    loss = loss_function(outputs, targets)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            else:
                outputs = model(inputs)
                loss = loss_function(outputs, targets)
                loss.backward()
                optimizer.step()
            epoch_loss += loss.item()
            if step % 100 == 0:
                print(f"{step}/{len(train_ds) // train_loader.batch_size}, train_loss: {loss.item():.4f}")
        scheduler.step()
        epoch_loss /= step
        print(f"epoch {epoch + 1} average loss: {epoch_loss:.4f}")

        if (epoch + 1) % args.val_interval == 0:
            model.eval()
            with torch.no_grad():
                y_pred = torch.tensor([], dtype=torch.float32, device=device)
                y = torch.tensor([], dtype=torch.float32, device=device)
                for val_data in val_loader:
                    val_images, val_labels = val_data["image"].to(device), val_data["label"].to(device)
                    if args.amp:
                        with torch.autocast(device_type="cuda", dtype=torch.float16):
                            val_outputs = model(val_images)
                    else:
                        val_outputs = model(val_images)
                    y_pred = torch.cat([y_pred, val_outputs.float()], dim=0)
                    y = torch.cat([y, val_labels], dim=0)
                y_pred_act = [post_pred(i) for i in decollate_batch(y_pred)]
                auc_metric(y_pred_act, decollate_batch(y))
                auc_result = auc_metric.aggregate()
                auc_metric.reset()
                if auc_result > best_metric:
                    best_metric = auc_result
                    best_metric_epoch = epoch + 1
                    torch.save(model.state_dict(), os.path.join(args.out_dir, "best_metric_model.pth"))
                    print("saved new best metric model")
                print(
                    f"current epoch: {epoch + 1} current mean AUC: {auc_result:.4f}"
                    f" best mean AUC: {best_metric:.4f} at epoch: {best_metric_epoch}"
                )
        epoch_times.append(time.time() - epoch_start)
        print(f"time consuming of epoch {epoch + 1} is: {epoch_times[-1]:.4f}")

    total_time = time.time() - total_start
    print(f"train completed, best_metric: {best_metric:.4f} at epoch: {best_metric_epoch} total time: {total_time:.4f}")
    print(f"peak GPU memory: {torch.cuda.max_memory_allocated(device) / 1024 ** 3:.2f} GB")


if __name__ == "__main__":
    main()
