"""RSNA 2022 Cervical Spine Fracture Detection - stage 2 (2.5D classifier).

Multi-fold training of a timm backbone on stacks of neighbouring slices.
Usage:
    python train.py --fold 0 --backbone tf_efficientnetv2_s --gpus 0
    python train.py --fold -1      # all folds sequentially
"""
import argparse
import gc
import math
import os
import random
import time
from glob import glob

import cv2
import numpy as np
import pandas as pd
import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
import albumentations as A
from sklearn.metrics import roc_auc_score
from timm.utils import ModelEmaV2
from torch.cuda.amp import autocast, GradScaler
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm

from src.utils.common import AverageMeter, get_logger, timer


class CFG:
    seed = 42
    data_dir = "../input/rsna-2022-cervical-spine-fracture-detection"
    crop_dir = "../input/rsna-cspine-crops-2p5d"
    out_dir = "./outputs"
    backbone = "tf_efficientnetv2_s_in21ft1k"
    in_chans = 6  # 5 slices + mask channel
    image_size = 384
    n_slice_per_c = 15
    n_folds = 5
    epochs = 15
    batch_size = 8
    num_workers = 8
    lr = 23e-5
    eta_min = 23e-6
    wd = 1e-5
    drop_rate = 0.0
    drop_path_rate = 0.1
    amp = True
    ema = True
    ema_decay = 0.997
    grad_clip = 10.0
    accum_steps = 1
    gpus = "0"


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--fold", type=int, default=-1)
    p.add_argument("--backbone", type=str, default=CFG.backbone)
    p.add_argument("--gpus", type=str, default=CFG.gpus)
    p.add_argument("--epochs", type=int, default=CFG.epochs)
    p.add_argument("--debug", action="store_true")
    return p.parse_args()


args = parse_args()
CFG.backbone = args.backbone
CFG.gpus = args.gpus
CFG.epochs = args.epochs
os.environ["CUDA_VISIBLE_DEVICES"] = CFG.gpus
os.makedirs(CFG.out_dir, exist_ok=True)
LOGGER = get_logger(os.path.join(CFG.out_dir, f"train_{CFG.backbone}.log"))
device = torch.device("cuda")


def seed_everything(seed):
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = True  # fixed input size, let cuDNN pick kernels


transforms_train = A.Compose([
    A.Resize(CFG.image_size, CFG.image_size),
    A.HorizontalFlip(p=0.5),
    A.VerticalFlip(p=0.5),
    A.Transpose(p=0.5),
    A.RandomBrightnessContrast(brightness_limit=0.1, contrast_limit=0.1, p=0.7),
    A.ShiftScaleRotate(shift_limit=0.1, scale_limit=0.1, rotate_limit=15, border_mode=4, p=0.7),
    A.OneOf([
        A.MotionBlur(blur_limit=5),
        A.MedianBlur(blur_limit=5),
        A.GaussianBlur(blur_limit=5),
        A.GaussNoise(var_limit=(5.0, 30.0)),
    ], p=0.5),
    A.CoarseDropout(max_height=int(CFG.image_size * 0.2), max_width=int(CFG.image_size * 0.2),
                    max_holes=1, p=0.5),
])
transforms_valid = A.Compose([A.Resize(CFG.image_size, CFG.image_size)])


class CLSDataset(Dataset):
    def __init__(self, df, mode, transform):
        self.df = df.reset_index()
        self.mode = mode
        self.transform = transform

    def __len__(self):
        return self.df.shape[0]

    def __getitem__(self, index):
        row = self.df.iloc[index]
        cid = row.c
        images = []
        for ind in list(range(CFG.n_slice_per_c)):
            filepath = os.path.join(CFG.crop_dir, f"{row.StudyInstanceUID}_{cid}_{ind}.npy")
            image = np.load(filepath)
            image = self.transform(image=image)["image"]
            image = image.transpose(2, 0, 1).astype(np.float32) / 255.0
            images.append(image)
        images = np.stack(images, 0)
        if self.mode != "test":
            label = row["label"]
            return torch.tensor(images).float(), torch.tensor([label] * CFG.n_slice_per_c).float()
        return torch.tensor(images).float()


class TimmModel(nn.Module):
    """CNN encoder per slice + bidirectional LSTM over the slice axis."""

    def __init__(self, backbone, pretrained=False):
        super().__init__()
        self.encoder = timm.create_model(
            backbone,
            in_chans=CFG.in_chans,
            num_classes=1,
            features_only=False,
            drop_rate=CFG.drop_rate,
            drop_path_rate=CFG.drop_path_rate,
            pretrained=pretrained,
        )
        if "efficient" in backbone:
            hdim = self.encoder.conv_head.out_channels
            self.encoder.classifier = nn.Identity()
        elif "convnext" in backbone:
            hdim = self.encoder.head.fc.in_features
            self.encoder.head.fc = nn.Identity()
        else:
            raise ValueError(backbone)
        self.lstm = nn.LSTM(hdim, 256, num_layers=2, dropout=CFG.drop_rate, bidirectional=True,
                            batch_first=True)
        self.head = nn.Sequential(
            nn.Linear(512, 256),
            nn.BatchNorm1d(256),
            nn.Dropout(0.3),
            nn.LeakyReLU(0.1),
            nn.Linear(256, 1),
        )

    def forward(self, x):
        bs = x.shape[0]
        x = x.view(bs * CFG.n_slice_per_c, CFG.in_chans, CFG.image_size, CFG.image_size)
        feat = self.encoder(x)
        feat = feat.view(bs, CFG.n_slice_per_c, -1)
        feat, _ = self.lstm(feat)
        feat = feat.contiguous().view(bs * CFG.n_slice_per_c, -1)
        feat = self.head(feat)
        return feat.view(bs, CFG.n_slice_per_c).contiguous()


bce = nn.BCEWithLogitsLoss(reduction="none")


def criterion(logits, targets):
    losses = bce(logits.view(-1), targets.view(-1))
    losses[targets.view(-1) > 0] *= 2.0
    norm = torch.ones(logits.view(-1).shape[0]).to(device)
    norm[targets.view(-1) > 0] *= 2
    return losses.sum() / norm.sum()


def mixup(inputs, targets, alpha=0.5):
    indices = torch.randperm(inputs.size(0))
    shuffled_inputs = inputs[indices]
    shuffled_targets = targets[indices]
    lam = np.random.beta(alpha, alpha)
    inputs = inputs * lam + shuffled_inputs * (1 - lam)
    return inputs, targets, shuffled_targets, lam


def train_func(model, loader, optimizer, scaler, ema):
    model.train()
    meter = AverageMeter()
    bar = tqdm(loader, total=len(loader))
    optimizer.zero_grad(set_to_none=True)
    for step, (images, targets) in enumerate(bar):
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        do_mixup = random.random() < 0.5
        if do_mixup:
            images, targets, targets_mix, lam = mixup(images, targets)
        with autocast(enabled=CFG.amp):
            logits = model(images)
            loss = criterion(logits, targets)
            if do_mixup:
                loss = loss * lam + criterion(logits, targets_mix) * (1 - lam)
            loss = loss / CFG.accum_steps
        scaler.scale(loss).backward()
        if (step + 1) % CFG.accum_steps == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), CFG.grad_clip)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            if ema is not None:
                ema.update(model)
        meter.update(loss.item() * CFG.accum_steps, images.size(0))
        bar.set_description(f"loss:{meter.avg:.4f}")
    return meter.avg


@torch.no_grad()
def valid_func(model, loader):
    model.eval()
    meter = AverageMeter()
    gts, outputs = [], []
    for images, targets in tqdm(loader, total=len(loader)):
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        with autocast(enabled=CFG.amp):
            logits = model(images)
            loss = criterion(logits, targets)
        gts.append(targets.cpu())
        outputs.append(logits.float().sigmoid().cpu())
        meter.update(loss.item(), images.size(0))
    gts = torch.cat(gts).numpy().reshape(-1)
    outputs = torch.cat(outputs).numpy().reshape(-1)
    auc = roc_auc_score(gts, outputs)
    return meter.avg, auc


def run(fold, df):
    LOGGER.info(f"========== fold: {fold} training ==========")
    model_file = os.path.join(CFG.out_dir, f"{CFG.backbone}_fold{fold}_best.pth")
    train_ = df[df["fold"] != fold].reset_index(drop=True)
    valid_ = df[df["fold"] == fold].reset_index(drop=True)
    if args.debug:
        train_, valid_ = train_.iloc[:64], valid_.iloc[:32]
    dataset_train = CLSDataset(train_, "train", transform=transforms_train)
    dataset_valid = CLSDataset(valid_, "valid", transform=transforms_valid)
    loader_train = DataLoader(dataset_train, batch_size=CFG.batch_size, shuffle=True,
                              num_workers=CFG.num_workers, pin_memory=True, drop_last=True)
    loader_valid = DataLoader(dataset_valid, batch_size=CFG.batch_size, shuffle=False,
                              num_workers=CFG.num_workers, pin_memory=True)

    model = TimmModel(CFG.backbone, pretrained=True)
    model = model.to(device)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    ema = ModelEmaV2(model, decay=CFG.ema_decay) if CFG.ema else None

    optimizer = torch.optim.AdamW(model.parameters(), lr=CFG.lr, weight_decay=CFG.wd)
    scaler = GradScaler(enabled=CFG.amp)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(
        optimizer, T_0=CFG.epochs, T_mult=1, eta_min=CFG.eta_min)

    best_auc = 0.0
    for epoch in range(1, CFG.epochs + 1):
        scheduler.step(epoch - 1)
        with timer(f"fold {fold} epoch {epoch}", LOGGER):
            train_loss = train_func(model, loader_train, optimizer, scaler, ema)
            eval_model = ema.module if ema is not None else model
            valid_loss, auc = valid_func(eval_model, loader_valid)
        LOGGER.info(f"Fold {fold} Epoch {epoch} lr {optimizer.param_groups[0]['lr']:.7f} "
                    f"train {train_loss:.5f} valid {valid_loss:.5f} auc {auc:.5f}")
        if auc > best_auc:
            LOGGER.info(f"auc improved ({best_auc:.5f} --> {auc:.5f}), saving")
            to_save = eval_model.module if isinstance(eval_model, nn.DataParallel) else eval_model
            torch.save(to_save.state_dict(), model_file)
            best_auc = auc

    del model, ema, optimizer, scaler, loader_train, loader_valid
    gc.collect()
    torch.cuda.empty_cache()
    return best_auc


@torch.no_grad()
def predict_oof(model, loader):
    """Per-slice probabilities for the validation fold (saved for the stage-3 aggregation)."""
    model.eval()
    outs = []
    for images, _ in tqdm(loader, total=len(loader)):
        images = images.to(device, non_blocking=True)
        with autocast(enabled=CFG.amp):
            logits = model(images)
        outs.append(logits.float().sigmoid().cpu().numpy())
    return np.concatenate(outs)


def aggregate_study(df, probs, agg="max"):
    """Slice-level -> vertebra-level -> study-level probability (patient_overall)."""
    df = df.copy()
    df["prob"] = probs.max(1) if agg == "max" else probs.mean(1)
    vert = df.pivot_table(index="StudyInstanceUID", columns="c", values="prob", aggfunc="max")
    vert.columns = [f"C{c}" for c in vert.columns]
    vert["patient_overall"] = 1 - (1 - vert).prod(axis=1)
    return vert.reset_index()


def main():
    seed_everything(CFG.seed)
    LOGGER.info(f"device: {torch.cuda.get_device_name(0)} x{torch.cuda.device_count()}")
    df = pd.read_csv(os.path.join(CFG.data_dir, "train_seg_2p5d_folds.csv"))
    folds = range(CFG.n_folds) if args.fold == -1 else [args.fold]
    scores = []
    for fold in folds:
        scores.append(run(fold, df))
    LOGGER.info(f"CV per fold: {np.round(scores, 5)}  mean: {np.mean(scores):.5f}")


if __name__ == "__main__":
    main()
