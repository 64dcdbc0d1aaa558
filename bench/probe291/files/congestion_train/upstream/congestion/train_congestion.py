"""Train a routing-congestion predictor on placement feature maps.

Features (per GCell): macro region, RUDY, pin RUDY, cell density, pin density,
each rasterised to 256x256. Labels are post-global-route overflow maps from
the router (horizontal + vertical). Follows the CircuitNet/RouteNet setup but
adds a U-Net with attention gates.

Typical run on a 4-GPU node:
    python train_congestion.py --data ./data/ispd2015 --gpu_ids 0,1,2,3 --batch_size 32 --amp
"""
import argparse
import datetime
import glob
import json
import logging
import os
import random
import shutil
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torch.utils.tensorboard import SummaryWriter

from unet_attention import AttentionUNet

logger = logging.getLogger("congestion")

FEATURES = ["macro_region", "rudy", "rudy_pin", "cell_density", "pin_density"]


def get_args():
    p = argparse.ArgumentParser(description="congestion prediction training")
    p.add_argument("--data", required=True, help="directory with <design>/features.npz and labels.npz")
    p.add_argument("--split", default="splits/ispd2015.json")
    p.add_argument("--out", default="runs/congestion")
    p.add_argument("--epochs", type=int, default=80)
    p.add_argument("--batch_size", type=int, default=16)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--weight_decay", type=float, default=1e-4)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--gpu_ids", type=str, default="0", help="e.g. 0,1,2,3; -1 for CPU")
    p.add_argument("--amp", action="store_true", help="use torch.cuda.amp mixed precision")
    p.add_argument("--seed", type=int, default=2023)
    p.add_argument("--resume", default="")
    p.add_argument("--eval_every", type=int, default=1)
    return p.parse_args()


class CongestionDataset(Dataset):
    def __init__(self, root, designs, augment=False):
        self.samples = []
        for d in designs:
            self.samples += sorted(glob.glob(os.path.join(root, d, "*_features.npz")))
        self.augment = augment

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, idx):
        f = self.samples[idx]
        feat = np.load(f)
        lab = np.load(f.replace("_features.npz", "_labels.npz"))
        x = np.stack([feat[k] for k in FEATURES], axis=0).astype(np.float32)
        y = np.stack([lab["overflow_h"], lab["overflow_v"]], axis=0).astype(np.float32)
        if self.augment:
            if random.random() < 0.5:
                x, y = x[:, :, ::-1], y[:, :, ::-1]
            if random.random() < 0.5:
                x, y = x[:, ::-1, :], y[:, ::-1, :]
        return torch.from_numpy(x.copy()), torch.from_numpy(y.copy())


def setup_device(gpu_ids):
    ids = [int(i) for i in gpu_ids.split(",") if i.strip() != ""]
    if len(ids) == 0 or ids[0] < 0 or not torch.cuda.is_available():
        return torch.device("cpu"), []
    torch.cuda.set_device(ids[0])
    return torch.device("cuda:{}".format(ids[0])), ids


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)


def weighted_mse(pred, target, hot_weight=10.0, thresh=0.1):
    # congestion hotspots are rare; upweight them so the model does not
    # collapse to predicting an empty map
    w = torch.ones_like(target)
    w[target > thresh] = hot_weight
    return (w * (pred - target) ** 2).mean()


@torch.no_grad()
def evaluate(model, loader, device, use_amp):
    model.eval()
    tot, n = 0.0, 0
    tp = fp = fn = 0
    for x, y in loader:
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            pred = model(x)
        pred = pred.float()
        tot += F.mse_loss(pred, y, reduction="sum").item()
        n += y.numel()
        hot_pred = pred > 0.1
        hot_true = y > 0.1
        tp += (hot_pred & hot_true).sum().item()
        fp += (hot_pred & ~hot_true).sum().item()
        fn += (~hot_pred & hot_true).sum().item()
    precision = tp / max(tp + fp, 1)
    recall = tp / max(tp + fn, 1)
    f1 = 2 * precision * recall / max(precision + recall, 1e-8)
    return {"mse": tot / max(n, 1), "precision": precision, "recall": recall, "f1": f1}


def save_ckpt(state, is_best, out):
    path = os.path.join(out, "last.pth")
    torch.save(state, path)
    if is_best:
        shutil.copyfile(path, os.path.join(out, "best.pth"))


def main():
    args = get_args()
    os.makedirs(args.out, exist_ok=True)
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s",
                        handlers=[logging.StreamHandler(),
                                  logging.FileHandler(os.path.join(args.out, "train.log"))])
    seed_everything(args.seed)
    torch.backends.cudnn.benchmark = True

    device, gpu_ids = setup_device(args.gpu_ids)
    logger.info("device: %s, gpus: %s, cuda %s, cudnn %s", device, gpu_ids,
                torch.version.cuda, torch.backends.cudnn.version())
    if device.type == "cuda":
        for i in gpu_ids:
            props = torch.cuda.get_device_properties(i)
            logger.info("  GPU %d: %s, %.1f GB, sm_%d%d", i, props.name,
                        props.total_memory / 2**30, props.major, props.minor)

    with open(args.split) as f:
        split = json.load(f)
    train_set = CongestionDataset(args.data, split["train"], augment=True)
    val_set = CongestionDataset(args.data, split["val"])
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              num_workers=args.workers, pin_memory=True, drop_last=True,
                              persistent_workers=args.workers > 0)
    val_loader = DataLoader(val_set, batch_size=args.batch_size, shuffle=False,
                            num_workers=args.workers, pin_memory=True)
    logger.info("train %d samples, val %d samples", len(train_set), len(val_set))

    model = AttentionUNet(in_channels=len(FEATURES), out_channels=2)
    model = model.to(device)
    if len(gpu_ids) > 1:
        model = nn.DataParallel(model, device_ids=gpu_ids, output_device=gpu_ids[0])

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr,
                                                    total_steps=args.epochs * len(train_loader))
    use_amp = args.amp and device.type == "cuda"
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)

    start_epoch, best_f1 = 0, -1.0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=device)
        (model.module if isinstance(model, nn.DataParallel) else model).load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        scaler.load_state_dict(ckpt["scaler"])
        start_epoch, best_f1 = ckpt["epoch"] + 1, ckpt["best_f1"]
        logger.info("resumed from %s (epoch %d)", args.resume, ckpt["epoch"])

    writer = SummaryWriter(os.path.join(args.out, "tb"))
    step = start_epoch * len(train_loader)
    for epoch in range(start_epoch, args.epochs):
        model.train()
        t0 = time.time()
        running = 0.0
        for it, (x, y) in enumerate(train_loader):
            x = x.cuda(non_blocking=True) if device.type == "cuda" else x
            y = y.cuda(non_blocking=True) if device.type == "cuda" else y
            optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=use_amp):
                pred = model(x)
                loss = weighted_mse(pred.float(), y)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            running += loss.item()
            step += 1
            if it % 50 == 0:
                writer.add_scalar("train/loss", loss.item(), step)
                writer.add_scalar("train/lr", scheduler.get_last_lr()[0], step)
        epoch_time = time.time() - t0
        mem = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else 0.0
        logger.info("epoch %d loss %.5f time %.1fs max mem %.2f GB", epoch,
                    running / len(train_loader), epoch_time, mem)

        if (epoch + 1) % args.eval_every == 0:
            metrics = evaluate(model, val_loader, device, use_amp)
            for k, v in metrics.items():
                writer.add_scalar("val/" + k, v, epoch)
            logger.info("val %s", json.dumps(metrics))
            is_best = metrics["f1"] > best_f1
            best_f1 = max(best_f1, metrics["f1"])
            save_ckpt({
                "epoch": epoch,
                "model": (model.module if isinstance(model, nn.DataParallel) else model).state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "scaler": scaler.state_dict(),
                "best_f1": best_f1,
                "args": vars(args),
                "time": str(datetime.datetime.now()),
            }, is_best, args.out)
    writer.close()
    logger.info("done, best f1 %.4f", best_f1)


if __name__ == "__main__":
    main()
