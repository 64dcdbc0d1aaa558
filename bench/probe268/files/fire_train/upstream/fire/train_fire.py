#!/usr/bin/env python3
"""Training script for FIRe (Learning Super-Features for Image Retrieval, ICLR 2022).

Super-features are produced by the LIT module (Local feature Integration Transformer) on top of a
ResNet50 backbone and trained with a super-feature-level contrastive loss plus a decorrelation loss.

    python train_fire.py params/train_fire.yml --gpu 0 --amp
"""

import os
import sys
import time
import argparse
import random
from pathlib import Path

import yaml
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.transforms as transforms

from cirtorch.datasets.datahelpers import collate_tuples
from cirtorch.datasets.traindataset import TuplesDataset

import fire_network
from losses import SuperfeatureLoss, DecorrelationAttentionLoss
from how.utils import io_helpers, logging, data_helpers
from how.stages.train import Validation


def parse_args():
    parser = argparse.ArgumentParser(description="FIRe training")
    parser.add_argument("parameters", type=str, help="yaml file with training parameters")
    parser.add_argument("--experiment", "-e", default=None, type=str)
    parser.add_argument("--gpu", default=0, type=int, help="CUDA device index, -1 for cpu")
    parser.add_argument("--amp", action="store_true", help="train with torch.cuda.amp mixed precision")
    parser.add_argument("--seed", default=0, type=int)
    parser.add_argument("--resume", default=None, type=str)
    return parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def setup_device(gpu):
    if gpu < 0:
        return torch.device("cpu")
    device = torch.device(f"cuda:{gpu}")
    torch.cuda.set_device(device)
    # Ampere and newer: let the backbone convolutions / matmuls use TF32
    if torch.cuda.get_device_capability(device)[0] >= 8:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
    return device


def build_loader(training, transform):
    dataset = TuplesDataset(**training["dataset"], transform=transform)
    loader = torch.utils.data.DataLoader(dataset, batch_size=training["loader"]["batch_size"],
                                         shuffle=True, drop_last=True, num_workers=8,
                                         pin_memory=True, collate_fn=collate_tuples)
    return loader


def train_epoch(loader, net, criterion, decorr, optimizer, scaler, device, epoch, logger, use_amp,
                loss_weights):
    net.train()
    loader.dataset.create_epoch_tuples(net)
    meter_loss = data_helpers.AverageMeter()
    meter_sf = data_helpers.AverageMeter()
    meter_dec = data_helpers.AverageMeter()
    meter_time = data_helpers.AverageMeter()
    torch.cuda.reset_peak_memory_stats(device)

    end = time.time()
    for it, (images, targets) in enumerate(loader):
        optimizer.zero_grad(set_to_none=True)
        for tuple_images, target in zip(images, targets):
            target = target.to(device, non_blocking=True)
            with torch.cuda.amp.autocast(enabled=use_amp):
                superfeatures, attns, strengths = [], [], []
                for im in tuple_images:
                    sf, attn, strength = net.forward_superfeatures(im.to(device, non_blocking=True))
                    superfeatures.append(sf)
                    attns.append(attn)
                    strengths.append(strength)
                loss_sf = criterion(superfeatures, target, strengths)
                loss_dec = decorr(attns)
                loss = loss_weights["superfeature"] * loss_sf + loss_weights["decorrelation"] * loss_dec
            scaler.scale(loss).backward()
            meter_loss.update(loss.item())
            meter_sf.update(loss_sf.item())
            meter_dec.update(loss_dec.item())

        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=10.0)
        scaler.step(optimizer)
        scaler.update()

        meter_time.update(time.time() - end)
        end = time.time()
        if (it + 1) % 20 == 0 or it == 0 or (it + 1) == len(loader):
            mem = torch.cuda.max_memory_allocated(device) / 1024 ** 3
            logger.info(f">> Train: [{epoch}][{it + 1}/{len(loader)}] time {meter_time} "
                        f"loss {meter_loss} (sf {meter_sf}, decorr {meter_dec}) mem {mem:.1f}G")
    return meter_loss.avg


def main():
    args = parse_args()
    params = io_helpers.load_params(args.parameters)
    exp_name = args.experiment or Path(args.parameters).stem
    exp_path = Path(params["demo_train"]["exp_folder"]) / exp_name
    (exp_path / "epochs").mkdir(parents=True, exist_ok=True)
    logger = logging.init_logger(exp_path / "train.log")

    set_seed(args.seed)
    device = setup_device(args.gpu)
    use_amp = args.amp and device.type == "cuda"
    logger.info(f"Training on {device} (amp={use_amp})")

    net = fire_network.init_network(**params["model"]).to(device)
    transform = transforms.Compose([transforms.ToTensor(),
                                    transforms.Normalize(**dict(zip(["mean", "std"], net.runtime["mean_std"])))])
    training = params["training"]
    loader = build_loader(training, transform)

    criterion = SuperfeatureLoss(**training["loss_superfeature"]).to(device)
    decorr = DecorrelationAttentionLoss(**training["loss_decorrelation"]).to(device)
    optimizer = torch.optim.AdamW(net.parameter_groups(training["optimizer"]), **training["optimizer"])
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=training["epochs"])
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)

    start_epoch = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location=device)
        net.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        scaler.load_state_dict(checkpoint["scaler"])
        start_epoch = checkpoint["epoch"]
        logger.info(f"Resumed from {args.resume} (epoch {start_epoch})")

    globals_ = {"device": device, "transform": transform, "logger": logger,
                "exp_path": exp_path, "root_path": Path(params["demo_train"]["data_folder"])}
    validation = Validation(params["validation"], globals_)

    for epoch in range(start_epoch, training["epochs"]):
        epoch1 = epoch + 1
        set_seed(args.seed + epoch1)
        t0 = time.time()
        loss = train_epoch(loader, net, criterion, decorr, optimizer, scaler, device, epoch1, logger,
                           use_amp, training["loss_weights"])
        scheduler.step()
        validation.add_train_loss(loss, epoch1)
        validation.validate(net, epoch1)
        torch.save({"epoch": epoch1, "state_dict": net.state_dict(), "optimizer": optimizer.state_dict(),
                    "scaler": scaler.state_dict(), "net_params": params["model"], "_version": "fire/2022"},
                   exp_path / "epochs" / f"model_epoch{epoch1}.pth")
        logger.info(f"Epoch {epoch1} done in {time.time() - t0:.0f}s, loss {loss:.4f}")
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
