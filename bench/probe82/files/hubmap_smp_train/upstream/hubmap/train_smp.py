"""HuBMAP - Hacking the Kidney: Unet/UnetPlusPlus training on 1024->256 tiles.

    python -m hubmap.train_smp --config configs/hubmap_unet_b5.yaml --fold 0
"""
import argparse
import os
import time

import numpy as np
import pandas as pd
import segmentation_models_pytorch as smp
import torch
import torch.nn as nn
import yaml
from torch.optim.swa_utils import AveragedModel, SWALR, update_bn
from torch.utils.data import DataLoader

from hubmap.dataset import HuBMAPTileDataset, get_aug
from src.losses import SymmetricLovaszLoss, DiceBCELoss
from src.utils.common import AverageMeter, get_logger, seed_everything

ENCODER_WEIGHTS = {
    "efficientnet-b5": "imagenet",
    "timm-efficientnet-b5": "noisy-student",
    "timm-regnety_064": "imagenet",
    "se_resnext50_32x4d": "imagenet",
}


def build_model(cfg):
    arch = cfg["model"]["arch"]
    encoder = cfg["model"]["encoder"]
    kwargs = dict(
        encoder_name=encoder,
        encoder_weights=ENCODER_WEIGHTS.get(encoder, "imagenet"),
        in_channels=3,
        classes=1,
        activation=None,
    )
    if arch == "Unet":
        model = smp.Unet(decoder_attention_type="scse", **kwargs)
    elif arch == "UnetPlusPlus":
        model = smp.UnetPlusPlus(**kwargs)
    elif arch == "FPN":
        model = smp.FPN(**kwargs)
    else:
        raise ValueError(f"unknown arch {arch}")
    return model


def dice_coef(logits, targets, thr=0.5, eps=1e-6):
    probs = torch.sigmoid(logits)
    preds = (probs > thr).float()
    inter = (preds * targets).sum(dim=(1, 2, 3))
    union = preds.sum(dim=(1, 2, 3)) + targets.sum(dim=(1, 2, 3))
    return ((2.0 * inter + eps) / (union + eps)).mean()


def train_one_epoch(model, loader, optimizer, scaler, criterion, cfg, logger, epoch):
    model.train()
    losses = AverageMeter()
    t0 = time.time()
    accum = cfg["train"].get("accum_steps", 1)
    for it, (images, masks) in enumerate(loader):
        images = images.cuda(non_blocking=True)
        masks = masks.cuda(non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=cfg["train"]["amp"]):
            logits = model(images)
            loss = criterion(logits, masks) / accum
        scaler.scale(loss).backward()
        if (it + 1) % accum == 0:
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), cfg["train"]["clip"])
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
        losses.update(loss.item() * accum, images.size(0))
        if it % cfg["train"]["log_every"] == 0:
            torch.cuda.synchronize()
            mem = torch.cuda.max_memory_allocated() / 1024 ** 3
            logger.info(f"ep {epoch} it {it}/{len(loader)} loss {losses.avg:.4f} "
                        f"{(time.time() - t0) / (it + 1):.3f}s/it mem {mem:.1f}G")
    return losses.avg


@torch.no_grad()
def validate(model, loader, criterion, cfg):
    model.eval()
    losses = AverageMeter()
    dice_sum = torch.zeros(1).cuda()
    n = 0
    for images, masks in loader:
        images, masks = images.cuda(non_blocking=True), masks.cuda(non_blocking=True)
        with torch.autocast("cuda", enabled=cfg["train"]["amp"]):
            logits = model(images)
        # flip TTA on validation too, it is cheap at 256px
        logits_h = model(torch.flip(images, dims=[-1])).flip(-1)
        logits = (logits.float() + logits_h.float()) / 2
        losses.update(criterion(logits, masks).item(), images.size(0))
        dice_sum += dice_coef(logits, masks) * images.size(0)
        n += images.size(0)
    return losses.avg, (dice_sum / n).item()


@torch.no_grad()
def predict_oof(model, loader, cfg):
    """Validation-set probabilities at tile level (uint8, 0..255) for the threshold search."""
    model.eval()
    dev = next(model.parameters()).device
    probs, gts = [], []
    for images, masks in loader:
        logits = model(images.to(dev, non_blocking=True)).float()
        logits = (logits + model(images.to(dev).flip(-1)).float().flip(-1)) / 2
        probs.append((torch.sigmoid(logits) * 255).byte().cpu().numpy())
        gts.append(masks.byte().numpy())
    return np.concatenate(probs), np.concatenate(gts)


def search_threshold(probs, gts, grid=np.arange(0.25, 0.66, 0.05)):
    """Global dice over all tiles for each threshold; returns (best_thr, {thr: dice})."""
    scores = {}
    gts = gts.astype(bool)
    gt_sum = gts.sum()
    for thr in grid:
        pred = probs >= int(thr * 255)
        inter = np.logical_and(pred, gts).sum()
        scores[round(float(thr), 2)] = 2.0 * inter / (pred.sum() + gt_sum + 1e-6)
    best = max(scores, key=scores.get)
    return best, scores


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--fold", type=int, default=0)
    parser.add_argument("--output", default="./outputs")
    args = parser.parse_args()

    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    out_dir = os.path.join(args.output, cfg["name"], f"fold{args.fold}")
    os.makedirs(out_dir, exist_ok=True)
    logger = get_logger(os.path.join(out_dir, "train.log"))
    seed_everything(cfg["seed"] + args.fold)
    torch.backends.cudnn.benchmark = True

    df = pd.read_csv(cfg["data"]["tiles_csv"])
    trn_df = df[df.fold != args.fold].reset_index(drop=True)
    val_df = df[df.fold == args.fold].reset_index(drop=True)
    # undersample empty tiles; the dataset is dominated by background
    empty = trn_df[trn_df.mask_ratio == 0].sample(frac=cfg["data"]["empty_frac"], random_state=cfg["seed"])
    trn_df = pd.concat([trn_df[trn_df.mask_ratio > 0], empty]).reset_index(drop=True)

    trn_ds = HuBMAPTileDataset(trn_df, cfg["data"]["tile_dir"], transforms=get_aug("train", cfg))
    val_ds = HuBMAPTileDataset(val_df, cfg["data"]["tile_dir"], transforms=get_aug("valid", cfg))
    trn_loader = DataLoader(trn_ds, batch_size=cfg["train"]["batch_size"], shuffle=True,
                            num_workers=cfg["train"]["workers"], pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_ds, batch_size=cfg["train"]["batch_size"] * 2, shuffle=False,
                            num_workers=cfg["train"]["workers"], pin_memory=True)

    model = build_model(cfg).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["train"]["lr"], weight_decay=cfg["train"]["wd"])
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=cfg["train"]["lr"], epochs=cfg["train"]["epochs"],
        steps_per_epoch=len(trn_loader) // cfg["train"].get("accum_steps", 1), pct_start=0.1)
    scaler = torch.cuda.amp.GradScaler(enabled=cfg["train"]["amp"])
    if cfg["loss"] == "lovasz":
        criterion = SymmetricLovaszLoss()
    else:
        criterion = DiceBCELoss(bce_weight=0.5)

    swa_start = cfg["train"].get("swa_start", -1)
    swa_model = AveragedModel(model) if swa_start >= 0 else None
    swa_scheduler = SWALR(optimizer, swa_lr=cfg["train"]["lr"] * 0.1) if swa_model is not None else None

    best = -1.0
    for epoch in range(cfg["train"]["epochs"]):
        trn_loss = train_one_epoch(model, trn_loader, optimizer, scaler, criterion, cfg, logger, epoch)
        if swa_model is not None and epoch >= swa_start:
            swa_model.update_parameters(model)
            swa_scheduler.step()
        else:
            scheduler.step()
        val_loss, val_dice = validate(model, val_loader, criterion, cfg)
        logger.info(f"epoch {epoch} trn {trn_loss:.4f} val {val_loss:.4f} dice {val_dice:.4f}")
        if val_dice > best:
            best = val_dice
            torch.save(model.state_dict(), os.path.join(out_dir, "best.pth"))

    if swa_model is not None:
        update_bn(trn_loader, swa_model, device=torch.device("cuda"))
        _, swa_dice = validate(swa_model, val_loader, criterion, cfg)
        logger.info(f"SWA dice {swa_dice:.4f} (best single {best:.4f})")
        torch.save(swa_model.module.state_dict(), os.path.join(out_dir, "swa.pth"))

    model.load_state_dict(torch.load(os.path.join(out_dir, "best.pth"), map_location="cpu"))
    probs, gts = predict_oof(model, val_loader, cfg)
    thr, scores = search_threshold(probs, gts)
    logger.info(f"threshold search: {scores} -> best {thr}")
    with open(os.path.join(out_dir, "threshold.yaml"), "w") as f:
        yaml.safe_dump({"threshold": float(thr), "dice": float(scores[thr])}, f)


if __name__ == "__main__":
    main()
