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
Fast training of the spleen segmentation task: regular PyTorch pipeline vs. a MONAI pipeline with
CacheDataset + ThreadDataLoader, transforms executed on the GPU, AMP, Novograd and the fast DiceCE loss.

    python fast_training_tutorial.py --data_dir /workspace/data/Task09_Spleen --fast
    python fast_training_tutorial.py --data_dir /workspace/data/Task09_Spleen --fast --profile   # nsys ranges
"""

import argparse
import glob
import math
import os
import time

import torch
from torch.optim import Adam

import monai
from monai.data import CacheDataset, DataLoader, ThreadDataLoader, decollate_batch, set_track_meta
from monai.inferers import sliding_window_inference
from monai.losses import DiceCELoss, DiceLoss
from monai.metrics import DiceMetric
from monai.networks.layers import Norm
from monai.networks.nets import UNet
from monai.optimizers import Novograd
from monai.transforms import (
    AsDiscrete,
    Compose,
    CropForegroundd,
    EnsureTyped,
    FgBgToIndicesd,
    LoadImaged,
    Orientationd,
    RandCropByPosNegLabeld,
    ScaleIntensityRanged,
    Spacingd,
    ToDeviced,
)
from monai.utils import set_determinism


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", default="/workspace/data/Task09_Spleen")
    parser.add_argument("--fast", action="store_true", help="use the accelerated MONAI pipeline")
    parser.add_argument("--max_epochs", type=int, default=300)
    parser.add_argument("--val_interval", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="emit NVTX ranges for Nsight Systems")
    parser.add_argument("--bf16", action="store_true", help="use bfloat16 autocast on Ampere and newer")
    return parser.parse_args()


def transformations(fast=False, device="cuda:0"):
    train_transforms = [
        LoadImaged(keys=["image", "label"], ensure_channel_first=True),
        Orientationd(keys=["image", "label"], axcodes="RAS"),
        Spacingd(keys=["image", "label"], pixdim=(1.5, 1.5, 2.0), mode=("bilinear", "nearest")),
        ScaleIntensityRanged(keys=["image"], a_min=-57, a_max=164, b_min=0.0, b_max=1.0, clip=True),
        CropForegroundd(keys=["image", "label"], source_key="image"),
        # pre-compute foreground and background indexes
        # and cache them to accelerate training
        FgBgToIndicesd(keys="label", fg_postfix="_fg", bg_postfix="_bg", image_key="image"),
    ]
    if fast:
        # move the cached volumes to GPU and make the random crops there as well
        train_transforms.append(EnsureTyped(keys=["image", "label"], track_meta=False))
        train_transforms.append(ToDeviced(keys=["image", "label"], device="cuda:0"))
    train_transforms.append(
        RandCropByPosNegLabeld(
            keys=["image", "label"],
            label_key="label",
            spatial_size=(96, 96, 96),
            pos=1,
            neg=1,
            num_samples=4,
            fg_indices_key="label_fg",
            bg_indices_key="label_bg",
        )
    )

    val_transforms = [
        LoadImaged(keys=["image", "label"], ensure_channel_first=True),
        Orientationd(keys=["image", "label"], axcodes="RAS"),
        Spacingd(keys=["image", "label"], pixdim=(1.5, 1.5, 2.0), mode=("bilinear", "nearest")),
        ScaleIntensityRanged(keys=["image"], a_min=-57, a_max=164, b_min=0.0, b_max=1.0, clip=True),
        CropForegroundd(keys=["image", "label"], source_key="image"),
    ]
    if fast:
        val_transforms.append(EnsureTyped(keys=["image", "label"], device=device, track_meta=False))
    return Compose(train_transforms), Compose(val_transforms)


def range_push(name, enabled):
    if enabled:
        torch.cuda.nvtx.range_push(name)


def range_pop(enabled):
    if enabled:
        torch.cuda.nvtx.range_pop()


def train_process(args):
    fast = args.fast
    learning_rate = 2e-4
    max_epochs = args.max_epochs
    val_interval = args.val_interval
    device = torch.device("cuda:0")

    train_images = sorted(glob.glob(os.path.join(args.data_dir, "imagesTr", "*.nii.gz")))
    train_labels = sorted(glob.glob(os.path.join(args.data_dir, "labelsTr", "*.nii.gz")))
    data_dicts = [{"image": image_name, "label": label_name} for image_name, label_name in zip(train_images, train_labels)]
    train_files, val_files = data_dicts[:-9], data_dicts[-9:]

    train_trans, val_trans = transformations(fast=fast, device=device)
    # set CacheDataset, ThreadDataLoader and DiceCE loss for MONAI fast training
    if fast:
        # as `RandCropByPosNegLabeld` crops from the cached content and `deepcopy`
        # the crop area instead of modifying the cached value, we can set `copy_cache=False`
        # to avoid unnecessary deepcopy of cached content in `CacheDataset`
        train_ds = CacheDataset(data=train_files, transform=train_trans, cache_rate=1.0, num_workers=8, copy_cache=False)
        val_ds = CacheDataset(data=val_files, transform=val_trans, cache_rate=1.0, num_workers=5, copy_cache=False)
        # disable multi-workers because `ThreadDataLoader` works with multi-threads
        train_loader = ThreadDataLoader(train_ds, num_workers=0, batch_size=4, shuffle=True)
        val_loader = ThreadDataLoader(val_ds, num_workers=0, batch_size=1)

        loss_function = DiceCELoss(to_onehot_y=True, softmax=True, squared_pred=True, batch=True)
        model = UNet(
            spatial_dims=3,
            in_channels=1,
            out_channels=2,
            channels=(16, 32, 64, 128, 256),
            strides=(2, 2, 2, 2),
            num_res_units=2,
            norm=Norm.BATCH,
        ).to(device)

        # avoid the computation of meta information in random transforms
        set_track_meta(False)
    else:
        train_ds = monai.data.Dataset(data=train_files, transform=train_trans)
        val_ds = monai.data.Dataset(data=val_files, transform=val_trans)
        train_loader = DataLoader(train_ds, batch_size=4, shuffle=True, num_workers=8,
                                  pin_memory=torch.cuda.is_available())
        val_loader = DataLoader(val_ds, batch_size=1, num_workers=4)
        loss_function = DiceLoss(to_onehot_y=True, softmax=True, squared_pred=True, batch=True)
        model = UNet(
            spatial_dims=3,
            in_channels=1,
            out_channels=2,
            channels=(16, 32, 64, 128, 256),
            strides=(2, 2, 2, 2),
            num_res_units=2,
            norm=Norm.BATCH,
        ).cuda()

    post_pred = Compose([AsDiscrete(argmax=True, to_onehot=2)])
    post_label = Compose([AsDiscrete(to_onehot=2)])

    dice_metric = DiceMetric(include_background=True, reduction="mean", get_not_nans=False)

    # Novograd paper suggests to use a bigger LR than Adam,
    # because Adam does normalization by element-wise second moments
    if fast:
        optimizer = Novograd(model.parameters(), learning_rate * 10)
        scaler = torch.cuda.amp.GradScaler()
    else:
        optimizer = Adam(model.parameters(), learning_rate)

    # bf16 needs compute capability 8.0+ (A100/H100); fp16 otherwise
    amp_dtype = torch.float16
    if args.bf16 and torch.cuda.get_device_capability(device)[0] >= 8:
        amp_dtype = torch.bfloat16
    # TF32 matmuls/convs are free speed on Ampere for this model
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    best_metric = -1
    best_metric_epoch = -1
    best_metrics_epochs_and_time = [[], [], []]
    epoch_loss_values = []
    metric_values = []
    epoch_times = []
    total_start = time.time()
    for epoch in range(max_epochs):
        range_push("epoch", args.profile)
        epoch_start = time.time()
        print("-" * 10)
        print(f"epoch {epoch + 1}/{max_epochs}")

        model.train()
        epoch_loss = 0
        train_loader_iterator = iter(train_loader)

        # using step instead of iterate through train_loader directly to track data loading time
        # steps are 1-indexed for printing and calculation purposes
        for step in range(1, len(train_loader) + 1):
            step_start = time.time()

            range_push("dataload", args.profile)
            batch_data = next(train_loader_iterator)
            inputs, labels = (
                batch_data["image"].to(device),
                batch_data["label"].to(device),
            )
            range_pop(args.profile)

            optimizer.zero_grad()
            # set AMP for MONAI training
            if fast:
                range_push("forward", args.profile)
                with torch.autocast("cuda", dtype=amp_dtype):
                    outputs = model(inputs)
                    loss = loss_function(outputs, labels)
                range_pop(args.profile)
                range_push("backward", args.profile)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                range_pop(args.profile)
            else:
                outputs = model(inputs)
                loss = loss_function(outputs, labels)
                loss.backward()
                optimizer.step()
            epoch_loss += loss.item()
            epoch_len = math.ceil(len(train_ds) / train_loader.batch_size)
            print(
                f"{step}/{epoch_len}, train_loss: {loss.item():.4f}" f" step time: {(time.time() - step_start):.4f}"
            )
        epoch_loss /= step
        epoch_loss_values.append(epoch_loss)
        print(f"epoch {epoch + 1} average loss: {epoch_loss:.4f}")

        if (epoch + 1) % val_interval == 0:
            model.eval()
            with torch.no_grad():
                for val_data in val_loader:
                    val_inputs, val_labels = (
                        val_data["image"].to(device),
                        val_data["label"].to(device),
                    )
                    roi_size = (160, 160, 160)
                    sw_batch_size = 4
                    # set AMP for MONAI validation
                    if fast:
                        with torch.autocast(device_type="cuda", dtype=amp_dtype):
                            val_outputs = sliding_window_inference(val_inputs, roi_size, sw_batch_size, model)
                    else:
                        val_outputs = sliding_window_inference(val_inputs, roi_size, sw_batch_size, model)
                    val_outputs = [post_pred(i) for i in decollate_batch(val_outputs)]
                    val_labels = [post_label(i) for i in decollate_batch(val_labels)]
                    dice_metric(y_pred=val_outputs, y=val_labels)

                metric = dice_metric.aggregate().item()
                dice_metric.reset()
                metric_values.append(metric)
                if metric > best_metric:
                    best_metric = metric
                    best_metric_epoch = epoch + 1
                    best_metrics_epochs_and_time[0].append(best_metric)
                    best_metrics_epochs_and_time[1].append(best_metric_epoch)
                    best_metrics_epochs_and_time[2].append(time.time() - total_start)
                    torch.save(model.state_dict(), "best_metric_model.pth")
                    print("saved new best metric model")
                print(
                    f"current epoch: {epoch + 1} current"
                    f" mean dice: {metric:.4f}"
                    f" best mean dice: {best_metric:.4f}"
                    f" at epoch: {best_metric_epoch}"
                )
        # make the epoch time honest: wait for the queued kernels
        torch.cuda.synchronize()
        range_pop(args.profile)
        print(f"time consuming of epoch {epoch + 1} is:" f" {(time.time() - epoch_start):.4f}")
        epoch_times.append(time.time() - epoch_start)

    total_time = time.time() - total_start
    print(
        f"train completed, best_metric: {best_metric:.4f}"
        f" at epoch: {best_metric_epoch}"
        f" total time: {total_time:.4f}"
        f" peak GPU memory: {torch.cuda.max_memory_allocated(device) / 2 ** 30:.2f} GiB"
    )
    return (
        max_epochs,
        epoch_loss_values,
        metric_values,
        epoch_times,
        best_metrics_epochs_and_time,
        total_time,
    )


if __name__ == "__main__":
    args = parse_args()
    set_determinism(seed=0)
    monai.config.print_config()
    results = train_process(args)
    print(f"epochs: {results[0]}, total time: {results[-1]:.1f} s")
