#!/usr/bin/env python3
""" ImageNet fine-tuning of timm models with NVIDIA DALI input pipelines.

Based on the timm train.py flow (model / optimizer / scheduler / EMA factories) but with the
torchvision loader replaced by DALI GPU decoding for higher throughput on 8x A100 nodes.

    torchrun --nproc_per_node=8 train_dali.py /data/imagenet --model vit_base_patch16_224.augreg_in21k \
        --batch-size 128 --lr 5e-4 --epochs 30 --amp --amp-dtype bfloat16
"""
import argparse
import logging
import os
import time
from functools import partial

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as NativeDDP

import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali.pipeline import pipeline_def
from nvidia.dali.plugin.pytorch import DALIClassificationIterator, LastBatchPolicy

from timm import utils
from timm.loss import SoftTargetCrossEntropy
from timm.models import create_model, safe_model_name
from timm.optim import create_optimizer_v2
from timm.scheduler import create_scheduler_v2
from timm.utils import ApexScaler, NativeScaler

_logger = logging.getLogger("train")

IMAGENET_MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
IMAGENET_STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]

parser = argparse.ArgumentParser(description="timm + DALI ImageNet training")
parser.add_argument("data_dir", metavar="DIR", help="path to dataset (train/ val/ folders)")
parser.add_argument("--model", default="resnet50", type=str)
parser.add_argument("--pretrained", action="store_true", default=True)
parser.add_argument("--num-classes", type=int, default=1000)
parser.add_argument("--img-size", type=int, default=224)
parser.add_argument("-b", "--batch-size", type=int, default=128)
parser.add_argument("--epochs", type=int, default=30)
parser.add_argument("--opt", default="adamw", type=str)
parser.add_argument("--lr", type=float, default=5e-4)
parser.add_argument("--weight-decay", type=float, default=0.05)
parser.add_argument("--sched", default="cosine", type=str)
parser.add_argument("--warmup-epochs", type=int, default=3)
parser.add_argument("-j", "--workers", type=int, default=6, help="DALI CPU threads per GPU")
parser.add_argument("--amp", action="store_true", default=False, help="use mixed precision training")
parser.add_argument("--amp-dtype", default="float16", type=str, help="lower precision AMP dtype (float16 or bfloat16)")
parser.add_argument("--channels-last", action="store_true", default=False)
parser.add_argument("--device", default="cuda", type=str, help="Device (accelerator) to use.")
parser.add_argument("--seed", type=int, default=42)
parser.add_argument("--output", default="./output", type=str)


@pipeline_def
def imagenet_pipe(data_dir, crop, shard_id, num_shards, is_training=True):
    jpegs, labels = fn.readers.file(
        file_root=data_dir,
        shard_id=shard_id,
        num_shards=num_shards,
        random_shuffle=is_training,
        pad_last_batch=True,
        name="Reader",
    )
    if is_training:
        images = fn.decoders.image_random_crop(
            jpegs, device="mixed", output_type=types.RGB,
            random_aspect_ratio=[0.75, 4.0 / 3.0], random_area=[0.08, 1.0], num_attempts=100,
        )
        images = fn.resize(images, device="gpu", resize_x=crop, resize_y=crop, interp_type=types.INTERP_TRIANGULAR)
        mirror = fn.random.coin_flip(probability=0.5)
    else:
        images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
        images = fn.resize(images, device="gpu", resize_shorter=int(crop / 0.875), interp_type=types.INTERP_TRIANGULAR)
        mirror = False
    images = fn.crop_mirror_normalize(
        images.gpu(),
        dtype=types.FLOAT,
        output_layout="CHW",
        crop=(crop, crop),
        mean=IMAGENET_MEAN,
        std=IMAGENET_STD,
        mirror=mirror,
    )
    labels = labels.gpu()
    return images, labels


def make_loader(args, split, is_training):
    pipe = imagenet_pipe(
        batch_size=args.batch_size,
        num_threads=args.workers,
        device_id=args.local_rank,
        seed=args.seed + args.rank,
        data_dir=os.path.join(args.data_dir, split),
        crop=args.img_size,
        shard_id=args.rank,
        num_shards=args.world_size,
        is_training=is_training,
    )
    pipe.build()
    return DALIClassificationIterator(pipe, reader_name="Reader", last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)


def train_one_epoch(epoch, model, loader, optimizer, loss_fn, args, amp_autocast, loss_scaler, lr_scheduler):
    model.train()
    losses_m = utils.AverageMeter()
    num_updates = epoch * len(loader)
    end = time.time()
    for batch_idx, data in enumerate(loader):
        input = data[0]["data"]
        target = data[0]["label"].squeeze(-1).long()
        if args.channels_last:
            input = input.contiguous(memory_format=torch.channels_last)

        with amp_autocast():
            output = model(input)
            loss = loss_fn(output, target)

        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler(loss, optimizer, parameters=model.parameters())
        else:
            loss.backward()
            optimizer.step()

        torch.cuda.synchronize()
        num_updates += 1
        losses_m.update(loss.item(), input.size(0))
        lr_scheduler.step_update(num_updates=num_updates, metric=losses_m.avg)
        if args.rank == 0 and batch_idx % 50 == 0:
            _logger.info(f"epoch {epoch} [{batch_idx}/{len(loader)}] loss {losses_m.avg:.4f} "
                         f"{(time.time() - end) / (batch_idx + 1):.3f}s/it")
    return losses_m.avg


def main():
    utils.setup_default_logging()
    args = parser.parse_args()

    device = utils.init_distributed_device(args)
    utils.random_seed(args.seed, args.rank)

    model = create_model(args.model, pretrained=args.pretrained, num_classes=args.num_classes)
    model.to(device=device)
    if args.channels_last:
        model.to(memory_format=torch.channels_last)

    optimizer = create_optimizer_v2(model, opt=args.opt, lr=args.lr, weight_decay=args.weight_decay)

    amp_autocast = partial(torch.autocast, device_type="cuda", dtype=getattr(torch, args.amp_dtype)) if args.amp else utils.suppress
    loss_scaler = NativeScaler() if args.amp and args.amp_dtype == "float16" else None

    if args.distributed:
        model = NativeDDP(model, device_ids=[device])

    train_loader = make_loader(args, "train", is_training=True)
    lr_scheduler, num_epochs = create_scheduler_v2(optimizer, sched=args.sched, num_epochs=args.epochs,
                                                   warmup_epochs=args.warmup_epochs, updates_per_epoch=len(train_loader))
    loss_fn = nn.CrossEntropyLoss().to(device)

    for epoch in range(num_epochs):
        train_loss = train_one_epoch(epoch, model, train_loader, optimizer, loss_fn, args,
                                     amp_autocast, loss_scaler, lr_scheduler)
        lr_scheduler.step(epoch + 1, train_loss)
        if args.rank == 0:
            torch.save(model.state_dict(), os.path.join(args.output, f"{safe_model_name(args.model)}-{epoch}.pth"))


if __name__ == "__main__":
    main()
