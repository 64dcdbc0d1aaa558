"""3-D abdominal organ segmentation with MONAI: cached GPU transforms, AMP, channels_last_3d, sliding window eval.

python train_unet3d.py --data_dir ./Task09_Spleen --max_epochs 600
"""
import argparse
import glob
import os
import time

import torch
from monai.data import CacheDataset, ThreadDataLoader, decollate_batch
from monai.inferers import sliding_window_inference
from monai.losses import DiceCELoss
from monai.metrics import DiceMetric
from monai.networks.nets import UNet
from monai.transforms import (
    AsDiscrete, Compose, CropForegroundd, EnsureChannelFirstd, EnsureTyped, LoadImaged, Orientationd,
    RandCropByPosNegLabeld, RandFlipd, RandRotate90d, ScaleIntensityRanged, Spacingd,
)
from monai.utils import set_determinism


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data_dir", default="./Task09_Spleen")
    p.add_argument("--max_epochs", type=int, default=600)
    p.add_argument("--val_interval", type=int, default=5)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--amp", action="store_true", default=True)
    p.add_argument("--channels_last", action="store_true")
    p.add_argument("--compile", action="store_true")
    return p.parse_args()


def transforms(device, train=True):
    common = [
        LoadImaged(keys=["image", "label"]),
        EnsureChannelFirstd(keys=["image", "label"]),
        Orientationd(keys=["image", "label"], axcodes="RAS"),
        Spacingd(keys=["image", "label"], pixdim=(1.5, 1.5, 2.0), mode=("bilinear", "nearest")),
        ScaleIntensityRanged(keys=["image"], a_min=-57, a_max=164, b_min=0.0, b_max=1.0, clip=True),
        CropForegroundd(keys=["image", "label"], source_key="image"),
        # move the cached volumes to the GPU once; random crops then run on the GPU
        EnsureTyped(keys=["image", "label"], device=device, track_meta=False),
    ]
    if not train:
        return Compose(common)
    return Compose(common + [
        RandCropByPosNegLabeld(keys=["image", "label"], label_key="label", spatial_size=(96, 96, 96),
                               pos=1, neg=1, num_samples=4, image_key="image", image_threshold=0),
        RandFlipd(keys=["image", "label"], spatial_axis=[0], prob=0.1),
        RandRotate90d(keys=["image", "label"], prob=0.1, max_k=3),
    ])


def main():
    args = get_args()
    set_determinism(seed=0)
    device = torch.device("cuda:0")
    images = sorted(glob.glob(os.path.join(args.data_dir, "imagesTr", "*.nii.gz")))
    labels = sorted(glob.glob(os.path.join(args.data_dir, "labelsTr", "*.nii.gz")))
    files = [{"image": i, "label": l} for i, l in zip(images, labels)]
    train_files, val_files = files[:-9], files[-9:]

    train_ds = CacheDataset(train_files, transform=transforms(device, True), cache_rate=1.0, num_workers=8, copy_cache=False)
    val_ds = CacheDataset(val_files, transform=transforms(device, False), cache_rate=1.0, num_workers=5, copy_cache=False)
    # data already on the GPU: ThreadDataLoader with num_workers=0 avoids CUDA in worker processes
    train_loader = ThreadDataLoader(train_ds, num_workers=0, batch_size=4, shuffle=True)
    val_loader = ThreadDataLoader(val_ds, num_workers=0, batch_size=1)

    model = UNet(spatial_dims=3, in_channels=1, out_channels=2, channels=(16, 32, 64, 128, 256),
                 strides=(2, 2, 2, 2), num_res_units=2, norm="batch").to(device)
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last_3d)
    if args.compile:
        model = torch.compile(model)
    loss_function = DiceCELoss(to_onehot_y=True, softmax=True, squared_pred=True, batch=True)
    optimizer = torch.optim.Adam(model.parameters(), args.lr)
    scaler = torch.cuda.amp.GradScaler() if args.amp else None
    dice_metric = DiceMetric(include_background=False, reduction="mean")
    post_pred = Compose([AsDiscrete(argmax=True, to_onehot=2)])
    post_label = Compose([AsDiscrete(to_onehot=2)])
    torch.backends.cudnn.benchmark = True

    best_metric, best_epoch = -1, -1
    total_start = time.time()
    for epoch in range(args.max_epochs):
        model.train()
        epoch_loss, step = 0.0, 0
        for batch in train_loader:
            step += 1
            inputs, targets = batch["image"], batch["label"]
            if args.channels_last:
                inputs = inputs.contiguous(memory_format=torch.channels_last_3d)
            optimizer.zero_grad(set_to_none=True)
            if args.amp:
                with torch.autocast(device_type="cuda", dtype=torch.float16):
                    loss = loss_function(model(inputs), targets)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            else:
                loss = loss_function(model(inputs), targets)
                loss.backward()
                optimizer.step()
            epoch_loss += loss.item()
        print(f"epoch {epoch + 1} average loss: {epoch_loss / step:.4f}")

        if (epoch + 1) % args.val_interval == 0:
            model.eval()
            with torch.no_grad():
                for val_data in val_loader:
                    with torch.autocast(device_type="cuda", enabled=args.amp):  # val
                        val_outputs = sliding_window_inference(val_data["image"], (160, 160, 160), 4, model,
                                                               overlap=0.5, sw_device=device, device=device)
                    val_outputs = [post_pred(i) for i in decollate_batch(val_outputs)]
                    val_labels = [post_label(i) for i in decollate_batch(val_data["label"])]
                    dice_metric(y_pred=val_outputs, y=val_labels)
                metric = dice_metric.aggregate().item()
                dice_metric.reset()
            if metric > best_metric:
                best_metric, best_epoch = metric, epoch + 1
                torch.save(model.state_dict(), "best_metric_model.pth")
            print(f"current mean dice: {metric:.4f} best: {best_metric:.4f} at epoch {best_epoch}; "
                  f"max mem {torch.cuda.max_memory_allocated(device) / 2**30:.1f} GiB")
    print(f"train completed in {time.time() - total_start:.1f}s, best_metric: {best_metric:.4f} at epoch: {best_epoch}")


if __name__ == "__main__":
    main()
