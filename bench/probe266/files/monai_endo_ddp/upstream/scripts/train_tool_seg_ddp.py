# Copyright (c) MONAI Consortium
# Licensed under the Apache License, Version 2.0 (the "License");
#     http://www.apache.org/licenses/LICENSE-2.0
"""Multi-GPU (DistributedDataParallel) variant of the endoscopic tool segmentation recipe.

Launch one process per GPU:

    torchrun --nproc_per_node=4 scripts/train_tool_seg_ddp.py --data_dir /data/endoscopic_tool_dataset

Each rank caches only its own partition of the dataset (`partition_dataset`) so host RAM does not
scale with the number of GPUs.
"""
import argparse
import glob
import logging
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data.distributed import DistributedSampler

import monai
from monai.data import CacheDataset, DataLoader, decollate_batch, partition_dataset
from monai.losses import DiceCELoss
from monai.metrics import DiceMetric
from monai.networks.nets import FlexibleUNet
from monai.transforms import (
    Activations,
    AsDiscrete,
    AsDiscreted,
    Compose,
    EnsureChannelFirstd,
    EnsureTyped,
    Lambdad,
    LoadImaged,
    RandFlipd,
    RandRotate90d,
    Resized,
    ScaleIntensityd,
)
from monai.utils import set_determinism


def get_files(data_dir, split):
    images = sorted(glob.glob(os.path.join(data_dir, split, "*", "*.jpg")))
    return [{"image": i, "label": i.replace(".jpg", "_seg.png")} for i in images]


def train(args):
    # initialize the distributed training process, every GPU runs in a process
    dist.init_process_group(backend="nccl", init_method="env://")
    local_rank = int(os.environ["LOCAL_RANK"])
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    device = torch.device(f"cuda:{local_rank}")
    torch.cuda.set_device(device)
    # use amp to accelerate training
    scaler = torch.cuda.amp.GradScaler()
    torch.backends.cudnn.benchmark = True

    if rank == 0:
        logging.basicConfig(stream=sys.stdout, level=logging.INFO)
        monai.config.print_config()
    set_determinism(seed=args.seed + rank)

    keys = ["image", "label"]
    train_transforms = Compose(
        [
            LoadImaged(keys=keys, image_only=True),
            EnsureChannelFirstd(keys=keys),
            Lambdad(keys="label", func=lambda x: x[:1]),
            Resized(keys=keys, spatial_size=(736, 480), mode=("bilinear", "nearest")),
            ScaleIntensityd(keys="image"),
            RandFlipd(keys=keys, prob=0.5, spatial_axis=0),
            RandRotate90d(keys=keys, prob=0.5, max_k=3),
            AsDiscreted(keys="label", threshold=0.5),
            EnsureTyped(keys=keys),
        ]
    )
    val_transforms = Compose(
        [
            LoadImaged(keys=keys, image_only=True),
            EnsureChannelFirstd(keys=keys),
            Lambdad(keys="label", func=lambda x: x[:1]),
            Resized(keys=keys, spatial_size=(736, 480), mode=("bilinear", "nearest")),
            ScaleIntensityd(keys="image"),
            AsDiscreted(keys="label", threshold=0.5),
            EnsureTyped(keys=keys),
        ]
    )

    train_files = partition_dataset(
        data=get_files(args.data_dir, "train"),
        num_partitions=world_size,
        shuffle=True,
        even_divisible=True,
    )[rank]
    train_ds = CacheDataset(data=train_files, transform=train_transforms, cache_rate=1.0, num_workers=4)
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=2,
                              pin_memory=torch.cuda.is_available())

    val_ds = CacheDataset(data=get_files(args.data_dir, "val"), transform=val_transforms, cache_rate=1.0)
    val_sampler = DistributedSampler(val_ds, shuffle=False)
    val_loader = DataLoader(val_ds, batch_size=1, sampler=val_sampler, num_workers=2)

    model = FlexibleUNet(in_channels=3, out_channels=1, backbone="efficientnet-b2", pretrained=True)
    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model).to(device)
    model = DistributedDataParallel(model, device_ids=[device], output_device=device)

    loss_function = DiceCELoss(sigmoid=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr * world_size, weight_decay=1e-5, fused=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    dice_metric = DiceMetric(include_background=True, reduction="mean")
    post_trans = Compose([Activations(sigmoid=True), AsDiscrete(threshold=0.5)])

    best_metric, best_metric_epoch = -1, -1
    for epoch in range(args.epochs):
        t0 = time.time()
        model.train()
        epoch_loss = 0.0
        step = 0
        for batch_data in train_loader:
            step += 1
            inputs = batch_data["image"].to(device, non_blocking=True)
            labels = batch_data["label"].to(device, non_blocking=True)
            optimizer.zero_grad()
            with torch.autocast("cuda"):
                outputs = model(inputs)
                loss = loss_function(outputs, labels)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            epoch_loss += loss.item()
        scheduler.step()
        epoch_loss /= max(step, 1)

        model.eval()
        with torch.no_grad():
            for val_data in val_loader:
                val_images = val_data["image"].to(device)
                val_labels = val_data["label"].to(device)
                with torch.autocast(device_type="cuda", dtype=torch.float16):
                    val_outputs = model(val_images)
                val_outputs = [post_trans(i) for i in decollate_batch(val_outputs)]
                dice_metric(y_pred=val_outputs, y=decollate_batch(val_labels))
            metric = dice_metric.aggregate().item()
            dice_metric.reset()

        # every rank computed the metric on its own shard; average it
        metric_t = torch.tensor([metric], device=device)
        dist.all_reduce(metric_t, op=dist.ReduceOp.SUM)
        metric = metric_t.item() / world_size

        if rank == 0:
            if metric > best_metric:
                best_metric, best_metric_epoch = metric, epoch + 1
                torch.save(model.module.state_dict(), os.path.join(args.output_dir, "model_ddp.pt"))
            print(
                f"[rank0] epoch {epoch + 1}/{args.epochs} loss {epoch_loss:.4f} dice {metric:.4f} "
                f"best {best_metric:.4f}@{best_metric_epoch} {time.time() - t0:.1f}s"
            )
        dist.barrier()

    if rank == 0:
        print(f"train completed, best_metric: {best_metric:.4f} at epoch: {best_metric_epoch}")
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", required=True, type=str)
    parser.add_argument("--output_dir", default="./models", type=str)
    parser.add_argument("--epochs", default=100, type=int)
    parser.add_argument("--batch_size", default=8, type=int, help="per-GPU batch size")
    parser.add_argument("--lr", default=2e-4, type=float)
    parser.add_argument("--seed", default=0, type=int)
    args = parser.parse_args()
    os.makedirs(args.output_dir, exist_ok=True)
    train(args=args)


# usage example (refer to https://github.com/pytorch/pytorch/blob/master/torch/distributed/run.py):
# torchrun --nnodes=1 --nproc_per_node=NUM_GPUS_PER_NODE --master_addr="localhost" --master_port=1234
#     scripts/train_tool_seg_ddp.py -d DIR_OF_TESTDATA
if __name__ == "__main__":
    main()
