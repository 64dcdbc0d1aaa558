"""
Plant Pathology 2021 - FGVC8: multi-label leaf disease classification.

5-fold training of timm backbones (EfficientNet-B4 NS / SE-ResNeXt50 / ViT) on the 12 label
combinations of healthy / scab / rust / frog_eye_leaf_spot / powdery_mildew / complex.

    python train.py --config configs/effnet_b4_ns.yaml --fold 0 --gpu 0
    python train.py --config configs/effnet_b4_ns.yaml --fold -1          # all folds sequentially
"""
import argparse
import gc
import os
import time

import numpy as np
import pandas as pd
import timm
import torch
import torch.nn as nn
import yaml
from sklearn.metrics import f1_score
from torch.utils.data import DataLoader

from src.dataset import PlantDataset, get_transforms, LABELS
from src.losses import SoftTargetBCE, FocalLoss
from src.utils import (AverageMeter, Logger, cutmix, gpu_memory_usage, seed_everything,
                       get_scheduler, to_namespace)

try:
    from apex import amp as apex_amp
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False


def build_model(cfg):
    model = timm.create_model(cfg.model.name, pretrained=cfg.model.pretrained,
                              num_classes=len(LABELS), drop_rate=cfg.model.drop_rate,
                              drop_path_rate=cfg.model.drop_path_rate)
    return model


def build_optimizer(cfg, model):
    if cfg.train.optimizer == 'fused_adam':
        assert HAS_APEX, 'fused_adam needs NVIDIA apex (pip install -v --no-cache-dir ./apex --global-option=--cuda_ext)'
        return FusedAdam(model.parameters(), lr=cfg.train.lr, weight_decay=cfg.train.weight_decay)
    if cfg.train.optimizer == 'adamw':
        return torch.optim.AdamW(model.parameters(), lr=cfg.train.lr, weight_decay=cfg.train.weight_decay)
    return torch.optim.SGD(model.parameters(), lr=cfg.train.lr, momentum=0.9, nesterov=True,
                           weight_decay=cfg.train.weight_decay)


def train_one_epoch(cfg, model, loader, criterion, optimizer, scheduler, scaler, device, epoch, logger):
    model.train()
    losses = AverageMeter()
    start = time.time()
    optimizer.zero_grad()
    for step, (images, targets) in enumerate(loader):
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True).float()

        use_cutmix = cfg.train.cutmix_prob > 0 and np.random.rand() < cfg.train.cutmix_prob
        if use_cutmix:
            images, targets_a, targets_b, lam = cutmix(images, targets, cfg.train.cutmix_alpha)

        if cfg.train.amp == 'native':
            with torch.cuda.amp.autocast():
                logits = model(images)
                if use_cutmix:
                    loss = lam * criterion(logits, targets_a) + (1 - lam) * criterion(logits, targets_b)
                else:
                    loss = criterion(logits, targets)
            loss = loss / cfg.train.accum_steps
            scaler.scale(loss).backward()
        else:
            logits = model(images)
            if use_cutmix:
                loss = lam * criterion(logits, targets_a) + (1 - lam) * criterion(logits, targets_b)
            else:
                loss = criterion(logits, targets)
            loss = loss / cfg.train.accum_steps
            if cfg.train.amp == 'apex':
                with apex_amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()

        if (step + 1) % cfg.train.accum_steps == 0:
            if scaler is not None:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), cfg.train.max_grad_norm)
                scaler.step(optimizer)
                scaler.update()
            else:
                nn.utils.clip_grad_norm_(model.parameters(), cfg.train.max_grad_norm)
                optimizer.step()
            optimizer.zero_grad()
            if scheduler is not None and cfg.train.scheduler_step == 'batch':
                scheduler.step()

        losses.update(loss.item() * cfg.train.accum_steps, images.size(0))
        if step % cfg.train.log_interval == 0:
            used, total = gpu_memory_usage(cfg.gpu)
            logger.write(f'Epoch {epoch} [{step}/{len(loader)}] loss {losses.avg:.4f} '
                         f'lr {optimizer.param_groups[0]["lr"]:.2e} mem {used:.0f}/{total:.0f}MiB '
                         f'elapsed {time.time() - start:.0f}s')
    return losses.avg


@torch.no_grad()
def validate(cfg, model, loader, criterion, device):
    model.eval()
    losses = AverageMeter()
    preds, gts = [], []
    for images, targets in loader:
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True).float()
        logits = model(images)
        loss = criterion(logits, targets)
        losses.update(loss.item(), images.size(0))
        preds.append(torch.sigmoid(logits).cpu().numpy())
        gts.append(targets.cpu().numpy())
    preds = np.concatenate(preds)
    gts = np.concatenate(gts)
    f1 = f1_score(gts, preds > cfg.train.threshold, average='samples')
    return losses.avg, f1, preds


def run_fold(cfg, df, fold, device, logger):
    logger.write(f'========== fold {fold} ==========')
    trn_df = df[df.fold != fold].reset_index(drop=True)
    val_df = df[df.fold == fold].reset_index(drop=True)

    train_ds = PlantDataset(trn_df, cfg.data.image_dir, transforms=get_transforms(cfg, 'train'))
    valid_ds = PlantDataset(val_df, cfg.data.image_dir, transforms=get_transforms(cfg, 'valid'))
    train_loader = DataLoader(train_ds, batch_size=cfg.train.batch_size, shuffle=True,
                              num_workers=cfg.num_workers, pin_memory=True, drop_last=True)
    valid_loader = DataLoader(valid_ds, batch_size=cfg.train.batch_size * 2, shuffle=False,
                              num_workers=cfg.num_workers, pin_memory=True)

    model = build_model(cfg)
    model.to(device)
    optimizer = build_optimizer(cfg, model)
    scheduler = get_scheduler(cfg, optimizer, len(train_loader))

    scaler = None
    if cfg.train.amp == 'apex':
        assert HAS_APEX, 'apex not installed'
        model, optimizer = apex_amp.initialize(model, optimizer, opt_level=cfg.train.opt_level, verbosity=0)
    elif cfg.train.amp == 'native':
        scaler = torch.cuda.amp.GradScaler()

    criterion = SoftTargetBCE(smoothing=cfg.train.label_smoothing) if cfg.train.loss == 'bce' \
        else FocalLoss(gamma=2.0)

    best_f1, best_epoch = 0.0, -1
    oof = None
    for epoch in range(cfg.train.epochs):
        trn_loss = train_one_epoch(cfg, model, train_loader, criterion, optimizer, scheduler, scaler,
                                   device, epoch, logger)
        val_loss, val_f1, val_preds = validate(cfg, model, valid_loader, criterion, device)
        if scheduler is not None and cfg.train.scheduler_step == 'epoch':
            scheduler.step()
        logger.write(f'fold {fold} epoch {epoch}: train {trn_loss:.4f} valid {val_loss:.4f} F1 {val_f1:.4f}')
        if val_f1 > best_f1:
            best_f1, best_epoch = val_f1, epoch
            oof = val_preds
            torch.save({'model': model.state_dict(), 'f1': val_f1, 'epoch': epoch},
                       os.path.join(cfg.output_dir, f'{cfg.model.name}_fold{fold}_best.pth'))
    logger.write(f'fold {fold}: best F1 {best_f1:.4f} @ epoch {best_epoch}')

    val_df[[f'pred_{c}' for c in LABELS]] = oof
    del model, optimizer, scaler, train_loader, valid_loader
    gc.collect()
    torch.cuda.empty_cache()
    return val_df


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--config', type=str, default='configs/effnet_b4_ns.yaml')
    parser.add_argument('--fold', type=int, default=-1)
    parser.add_argument('--gpu', type=int, default=0, help='GPU index to train on')
    parser.add_argument('--debug', action='store_true')
    args = parser.parse_args()

    with open(args.config) as f:
        cfg = to_namespace(yaml.safe_load(f))
    cfg.gpu = args.gpu
    os.makedirs(cfg.output_dir, exist_ok=True)
    logger = Logger(os.path.join(cfg.output_dir, 'train.log'))
    seed_everything(cfg.seed)

    torch.backends.cudnn.benchmark = True
    torch.cuda.set_device(args.gpu)
    device = torch.device(f'{cfg.device}:{args.gpu}')
    logger.write(f'Using {torch.cuda.get_device_name(args.gpu)} for {cfg.model.name}')

    df = pd.read_csv(cfg.data.folds_csv)
    if args.debug:
        df = df.sample(n=512, random_state=cfg.seed).reset_index(drop=True)
        cfg.train.epochs = 1

    folds = range(cfg.n_folds) if args.fold < 0 else [args.fold]
    oofs = [run_fold(cfg, df, fold, device, logger) for fold in folds]
    oof = pd.concat(oofs).reset_index(drop=True)
    oof.to_csv(os.path.join(cfg.output_dir, 'oof.csv'), index=False)
    preds = oof[[f'pred_{c}' for c in LABELS]].values > cfg.train.threshold
    score = f1_score(oof[LABELS].values, preds, average='samples')
    logger.write(f'CV F1 (samples): {score:.4f}')


if __name__ == '__main__':
    main()
