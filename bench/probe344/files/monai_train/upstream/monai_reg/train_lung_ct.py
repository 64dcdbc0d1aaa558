"""
Paired lung CT registration (inspiration -> expiration) with MONAI.

Script version of the Learn2Reg NLST tutorial: a SegResNet predicts a dense displacement field,
MONAI's Warp resamples the moving image and keypoints, and the loss combines local normalized
cross correlation, a keypoint TRE term and bending energy.

    python train_lung_ct.py --data-dir /data/NLST --epochs 150 --amp

Tested with MONAI 1.3 / PyTorch 2.1 on a single A100 40GB.
"""

import argparse
import glob
import json
import logging
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

from monai.data import CacheDataset, DataLoader
from monai.losses import BendingEnergyLoss, LocalNormalizedCrossCorrelationLoss
from monai.metrics import DiceMetric
from monai.networks.blocks import Warp
from monai.networks.nets import SegResNet
from monai.transforms import (
    Compose,
    EnsureChannelFirstd,
    EnsureTyped,
    LoadImaged,
    ScaleIntensityRanged,
    Resized,
    Lambdad,
)
from monai.utils import set_determinism, first

logging.basicConfig(stream=sys.stdout, level=logging.INFO)
log = logging.getLogger("lung_reg")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", default="./NLST")
    p.add_argument("--out-dir", default="./runs/nlst")
    p.add_argument("--epochs", type=int, default=150)
    p.add_argument("--val-interval", type=int, default=5)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--size", type=int, nargs=3, default=[96, 96, 96], help="network input size")
    p.add_argument("--lam-ncc", type=float, default=1.0)
    p.add_argument("--lam-tre", type=float, default=1.0)
    p.add_argument("--lam-be", type=float, default=10.0)
    p.add_argument("--amp", action="store_true", help="automatic mixed precision")
    p.add_argument("--cache-rate", type=float, default=1.0)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def load_keypoints(path):
    return torch.from_numpy(np.genfromtxt(path, delimiter=",")).float()


def get_files(data_dir):
    with open(os.path.join(data_dir, "NLST_dataset.json")) as f:
        meta = json.load(f)
    files = []
    for pair in meta["training_paired_images"]:
        fixed = os.path.join(data_dir, pair["fixed"])
        moving = os.path.join(data_dir, pair["moving"])
        files.append(
            {
                "fixed_image": fixed,
                "moving_image": moving,
                "fixed_label": fixed.replace("imagesTr", "masksTr"),
                "moving_label": moving.replace("imagesTr", "masksTr"),
                "fixed_keypoints": fixed.replace("imagesTr", "keypointsTr").replace("nii.gz", "csv"),
                "moving_keypoints": moving.replace("imagesTr", "keypointsTr").replace("nii.gz", "csv"),
            }
        )
    n_val = 10
    return files[:-n_val], files[-n_val:]


def get_transforms(size, device):
    image_keys = ["fixed_image", "moving_image"]
    label_keys = ["fixed_label", "moving_label"]
    kp_keys = ["fixed_keypoints", "moving_keypoints"]
    return Compose(
        [
            LoadImaged(keys=image_keys + label_keys),
            EnsureChannelFirstd(keys=image_keys + label_keys),
            ScaleIntensityRanged(keys=image_keys, a_min=-1200, a_max=400, b_min=0.0, b_max=1.0, clip=True),
            Resized(keys=image_keys, spatial_size=size, mode="trilinear"),
            Resized(keys=label_keys, spatial_size=size, mode="nearest"),
            Lambdad(keys=kp_keys, func=load_keypoints),
            # move everything to the GPU once; CacheDataset keeps the cached items there
            EnsureTyped(keys=image_keys + label_keys + kp_keys, device=device, track_meta=False),
        ]
    )


def forward(fixed_image, moving_image, moving_label, fixed_keypoints, model, warp_layer):
    """Predict DDF and warp the moving image, label and fixed keypoints."""
    batch_size = fixed_image.shape[0]
    ddf_image = model(torch.cat((moving_image, fixed_image), dim=1)).float()

    # warp moving image and label with the predicted ddf
    pred_image = warp_layer(moving_image, ddf_image)
    pred_label = warp_layer(moving_label, ddf_image) if moving_label is not None else None

    # warp the fixed keypoints by sampling the ddf at their (normalized) positions
    ddf_keypoints = None
    if fixed_keypoints is not None:
        size = torch.tensor(fixed_image.shape[-3:], device=fixed_keypoints.device)
        offset = torch.as_tensor(fixed_image.shape[-3:]) / 2
        offset = offset[None][None].to(fixed_keypoints.device)
        grid_sample_kp = ((fixed_keypoints.flip(-1) - offset.flip(-1)) / offset.flip(-1))[:, :, None, None]
        ddf_keypoints = (
            F.grid_sample(ddf_image, grid_sample_kp, align_corners=False)
            .view(batch_size, 3, -1)
            .permute((0, 2, 1))
        )
        del size
    return ddf_image, ddf_keypoints, pred_image, pred_label


def tre(fixed_kp, moving_kp, ddf_kp=None):
    if ddf_kp is not None:
        fixed_kp = fixed_kp + ddf_kp
    return ((fixed_kp - moving_kp) ** 2).sum(-1).sqrt().mean()


def main():
    args = parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    set_determinism(seed=args.seed)

    device = torch.device("cuda:0")
    torch.backends.cudnn.benchmark = True

    train_files, val_files = get_files(args.data_dir)
    transforms = get_transforms(args.size, device)
    train_ds = CacheDataset(data=train_files, transform=transforms, cache_rate=args.cache_rate,
                            num_workers=args.workers)
    val_ds = CacheDataset(data=val_files, transform=transforms, cache_rate=args.cache_rate,
                          num_workers=args.workers)
    # data is already on the GPU -> no workers and no pinning
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=0)
    val_loader = DataLoader(val_ds, batch_size=1, shuffle=False, num_workers=0)

    sample = first(train_loader)
    log.info("fixed image %s on %s", tuple(sample["fixed_image"].shape), sample["fixed_image"].device)

    model = SegResNet(
        spatial_dims=3,
        in_channels=2,
        out_channels=3,
        blocks_down=[1, 2, 2, 4],
        blocks_up=[1, 1, 1],
        init_filters=16,
        dropout_prob=0.2,
    ).to(device)
    warp_layer = Warp().to(device)

    lncc = LocalNormalizedCrossCorrelationLoss(spatial_dims=3, kernel_size=7, kernel_type="rectangular",
                                               reduction="mean")
    bending = BendingEnergyLoss()
    dice_metric = DiceMetric(include_background=True, reduction="mean", get_not_nans=False)

    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    lr_scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    best_tre = np.inf
    history = {"loss": [], "val_tre": [], "val_dice": []}
    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        epoch_loss = 0.0
        for step, batch in enumerate(train_loader, start=1):
            optimizer.zero_grad()
            with torch.cuda.amp.autocast(enabled=args.amp):
                ddf_image, ddf_kp, pred_image, _ = forward(
                    batch["fixed_image"], batch["moving_image"], None, batch["fixed_keypoints"],
                    model, warp_layer)
                loss = (
                    args.lam_ncc * lncc(pred_image, batch["fixed_image"])
                    + args.lam_tre * tre(batch["fixed_keypoints"], batch["moving_keypoints"], ddf_kp)
                    + args.lam_be * bending(ddf_image)
                )
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            epoch_loss += loss.item()
        lr_scheduler.step()
        epoch_loss /= step
        history["loss"].append(epoch_loss)
        log.info("epoch %d/%d loss %.4f (%.1fs)", epoch + 1, args.epochs, epoch_loss, time.time() - t0)

        if (epoch + 1) % args.val_interval == 0:
            model.eval()
            tres = []
            with torch.no_grad():
                for batch in val_loader:
                    with torch.autocast(device_type="cuda", enabled=args.amp):
                        ddf_image, ddf_kp, pred_image, pred_label = forward(
                            batch["fixed_image"], batch["moving_image"], batch["moving_label"],
                            batch["fixed_keypoints"], model, warp_layer)
                    pred_label = (pred_label > 0.5).float()
                    dice_metric(y_pred=pred_label, y=batch["fixed_label"])
                    tres.append(tre(batch["fixed_keypoints"], batch["moving_keypoints"], ddf_kp).item())
            val_dice = dice_metric.aggregate().item()
            dice_metric.reset()
            val_tre = float(np.mean(tres))
            history["val_tre"].append(val_tre)
            history["val_dice"].append(val_dice)
            log.info("  val TRE %.3f  Dice %.4f", val_tre, val_dice)
            if val_tre < best_tre:
                best_tre = val_tre
                torch.save(model.state_dict(), os.path.join(args.out_dir, "best_model.pth"))
                log.info("  saved new best model")

    with open(os.path.join(args.out_dir, "history.json"), "w") as f:
        json.dump(history, f)
    log.info("done, best val TRE %.3f", best_tre)


if __name__ == "__main__":
    main()
