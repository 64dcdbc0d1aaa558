"""
Multi-GPU training of an atlas-to-subject brain MRI registration network (OASIS) with MONAI and
PyTorch DistributedDataParallel.

Launch with torchrun, one process per GPU:

    torchrun --nproc_per_node=4 monai_reg/train_ddp.py --data-dir /data/OASIS --amp

Each process owns one GPU (LOCAL_RANK). The dataset is sharded with a DistributedSampler and
validation Dice is all-reduced across ranks before rank 0 logs and checkpoints.
"""

import argparse
import glob
import os
import time

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data.distributed import DistributedSampler

from monai.data import CacheDataset, DataLoader, partition_dataset
from monai.losses import BendingEnergyLoss, DiceLoss, GlobalMutualInformationLoss
from monai.networks.blocks import Warp, DVF2DDF
from monai.networks.nets import LocalNet
from monai.transforms import (
    Compose,
    EnsureChannelFirstd,
    LoadImaged,
    RandAffined,
    ScaleIntensityd,
    AsDiscreted,
    EnsureTyped,
)
from monai.utils import set_determinism

# surface NCCL errors instead of hanging forever when a rank dies
os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", required=True)
    p.add_argument("--atlas", default=None, help="atlas image; default: first training subject")
    p.add_argument("--out-dir", default="./runs/oasis_ddp")
    p.add_argument("--epochs", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=2, help="per-GPU batch size")
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--num-labels", type=int, default=36)
    p.add_argument("--lam-dice", type=float, default=1.0)
    p.add_argument("--lam-be", type=float, default=1.0)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--fused-adam", action="store_true", help="use the fused CUDA Adam kernel")
    p.add_argument("--resume", default=None)
    p.add_argument("--val-every", type=int, default=10)
    p.add_argument("--seed", type=int, default=42)
    return p.parse_args()


def setup_distributed():
    dist.init_process_group(backend="nccl", init_method="env://")
    local_rank = int(os.environ["LOCAL_RANK"])
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    device = torch.device(f"cuda:{local_rank}")
    torch.cuda.set_device(device)
    return rank, local_rank, world_size, device


def reduce_mean(value, device):
    """Average a python float over all ranks."""
    # NCCL can only reduce device tensors; gloo works on the CPU
    t = torch.tensor([value], dtype=torch.float32,
                     device=device if dist.get_backend() == "nccl" else "cpu")
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return (t / dist.get_world_size()).item()


def build_transforms(train):
    keys = ["moving_image", "moving_label", "fixed_image", "fixed_label"]
    xforms = [
        LoadImaged(keys=keys),
        EnsureChannelFirstd(keys=keys),
        ScaleIntensityd(keys=["moving_image", "fixed_image"]),
    ]
    if train:
        xforms.append(
            RandAffined(
                keys=["moving_image", "moving_label"],
                mode=("bilinear", "nearest"),
                prob=0.5,
                rotate_range=(np.pi / 36,) * 3,
                scale_range=(0.05,) * 3,
                padding_mode="border",
            )
        )
    xforms.append(EnsureTyped(keys=keys))
    return Compose(xforms)


def get_pairs(data_dir, atlas):
    images = sorted(glob.glob(os.path.join(data_dir, "OASIS_*", "aligned_norm.nii.gz")))
    labels = [p.replace("aligned_norm", "aligned_seg35") for p in images]
    atlas = atlas or images[0]
    atlas_label = atlas.replace("aligned_norm", "aligned_seg35")
    pairs = [
        {"moving_image": im, "moving_label": lb, "fixed_image": atlas, "fixed_label": atlas_label}
        for im, lb in zip(images[1:], labels[1:])
    ]
    return pairs[:-20], pairs[-20:]


def main():
    args = parse_args()
    rank, local_rank, world_size, device = setup_distributed()
    set_determinism(seed=args.seed + rank)
    is_main = rank == 0
    if is_main:
        os.makedirs(args.out_dir, exist_ok=True)
        print(f"world size {world_size}, per-GPU batch {args.batch_size}, "
              f"device {torch.cuda.get_device_name(local_rank)}")

    train_pairs, val_pairs = get_pairs(args.data_dir, args.atlas)
    # every rank caches only its own shard of the validation set
    val_shard = partition_dataset(val_pairs, num_partitions=world_size, shuffle=False)[rank]

    train_ds = CacheDataset(train_pairs, transform=build_transforms(True), cache_rate=0.5, num_workers=4)
    val_ds = CacheDataset(val_shard, transform=build_transforms(False), cache_rate=1.0, num_workers=2)
    train_sampler = DistributedSampler(train_ds, num_replicas=world_size, rank=rank, shuffle=True)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, sampler=train_sampler, num_workers=4,
                              pin_memory=True, persistent_workers=True)
    val_loader = DataLoader(val_ds, batch_size=1, num_workers=2)

    model = LocalNet(
        spatial_dims=3,
        in_channels=2,
        out_channels=3,
        num_channel_initial=32,
        extract_levels=[3],
        out_activation=None,
        out_kernel_initializer="zeros",
    ).to(device)
    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank)
    warp = Warp(mode="bilinear", padding_mode="border").to(device)
    warp_nn = Warp(mode="nearest", padding_mode="border").to(device)

    dice_loss = DiceLoss(to_onehot_y=True, softmax=False, include_background=False)
    be_loss = BendingEnergyLoss()
    mi_loss = GlobalMutualInformationLoss(num_bins=32)
    to_onehot = AsDiscreted(keys=None, to_onehot=args.num_labels)

    if args.fused_adam:
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, fused=True)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location={"cuda:0": f"cuda:{local_rank}"})
        model.module.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start_epoch = ckpt["epoch"] + 1

    best = -1.0
    for epoch in range(start_epoch, args.epochs):
        train_sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        running = 0.0
        n = 0
        for batch in train_loader:
            moving = batch["moving_image"].to(device, non_blocking=True)
            fixed = batch["fixed_image"].to(device, non_blocking=True)
            moving_label = batch["moving_label"].to(device, non_blocking=True)
            fixed_label = batch["fixed_label"].to(device, non_blocking=True)

            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.amp):
                ddf = model(torch.cat([moving, fixed], dim=1))
            ddf = ddf.float()
            moved = warp(moving, ddf)
            moved_label = warp(torch.nn.functional.one_hot(moving_label[:, 0].long(), args.num_labels)
                               .permute(0, 4, 1, 2, 3).float(), ddf)
            loss = (mi_loss(moved, fixed)
                    + args.lam_dice * dice_loss(moved_label, fixed_label)
                    + args.lam_be * be_loss(ddf))
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            running += loss.item()
            n += 1

        epoch_loss = reduce_mean(running / max(n, 1), device)
        if is_main:
            print(f"epoch {epoch + 1}/{args.epochs} loss {epoch_loss:.4f} {time.time() - t0:.1f}s")

        if (epoch + 1) % args.val_every == 0:
            model.eval()
            torch.cuda.reset_peak_memory_stats(device)
            scores = []
            with torch.no_grad():
                for batch in val_loader:
                    moving = batch["moving_image"].to(device)
                    fixed = batch["fixed_image"].to(device)
                    ddf = model(torch.cat([moving, fixed], dim=1)).float()
                    moved_label = warp_nn(batch["moving_label"].to(device).float(), ddf)
                    fixed_label = batch["fixed_label"].to(device)
                    dsc = 1.0 - DiceLoss(to_onehot_y=True, include_background=False)(
                        torch.nn.functional.one_hot(moved_label[:, 0].long(), args.num_labels)
                        .permute(0, 4, 1, 2, 3).float(), fixed_label)
                    scores.append(dsc.item())
            val_dice = reduce_mean(float(np.mean(scores)) if scores else 0.0, device)
            peak = torch.cuda.max_memory_allocated(device) / 2 ** 30
            torch.cuda.empty_cache()
            if is_main:
                print(f"  val Dice {val_dice:.4f} (peak mem {peak:.1f} GiB)")
                if val_dice > best:
                    best = val_dice
                    torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(),
                                "epoch": epoch}, os.path.join(args.out_dir, "best.pt"))
            dist.barrier()

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
