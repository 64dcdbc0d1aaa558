from __future__ import annotations

import json
from collections import defaultdict
from typing import TYPE_CHECKING

import numpy as np
import torch
import wandb
from torch.cuda.amp import GradScaler, autocast
from tqdm import tqdm

from utmosv2.runner._inference import run_inference
from utmosv2.utils import calc_metrics, print_metrics, save_oof_preds

if TYPE_CHECKING:
    import pandas as pd
    from torch.optim.lr_scheduler import LRScheduler

    from utmosv2._settings._config import Config


def _train_1epoch(
    cfg: Config,
    model: torch.nn.Module,
    train_dataloader: torch.utils.data.DataLoader,
    criterion: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: LRScheduler,
    device: torch.device,
) -> dict[str, float]:
    model.train()
    train_loss = defaultdict(float)
    scaler = GradScaler()
    print(f"  train: {len(train_dataloader)} batches")
    pbar = tqdm(train_dataloader, total=len(train_dataloader))
    for i, t in enumerate(pbar):
        x, y = t[:-1], t[-1]
        x = [t.to(device, non_blocking=True) for t in x]
        y = y.to(device, non_blocking=True)
        if cfg.run.mixup:
            lmd = np.random.beta(cfg.run.mixup_alpha, cfg.run.mixup_alpha)
            perm = torch.randperm(x[0].shape[0]).to(device)
            x2 = [t[perm, :] for t in x]
            y2 = y[perm]
        optimizer.zero_grad()
        with autocast():
            if cfg.run.mixup:
                output = model(*[lmd * t + (1 - lmd) * t2 for t, t2 in zip(x, x2)]).squeeze(1)
                if isinstance(cfg.loss, list):
                    loss = [
                        (w1, lmd * l1 + (1 - lmd) * l2)
                        for (w1, l1), (_, l2) in zip(criterion(output, y), criterion(output, y2))
                    ]
                else:
                    loss = lmd * criterion(output, y) + (1 - lmd) * criterion(output, y2)
            else:
                output = model(*x).squeeze(1)
                loss = criterion(output, y)
            if isinstance(loss, list):
                loss_total = sum(w * ls for w, ls in loss)
            else:
                loss_total = loss
        scaler.scale(loss_total).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.run.grad_clip)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        train_loss["loss"] += loss_total.detach().float().cpu().item()
        if isinstance(loss, list):
            for (cl, _), (_, ls) in zip(cfg.loss, loss):
                train_loss[cl.name] += ls.detach().float().cpu().item()
        pbar.set_description(
            f'    loss: {train_loss["loss"] / (i + 1):.4f} lr: {optimizer.param_groups[0]["lr"]:.2e}'
        )
    return {name: v / len(train_dataloader) for name, v in train_loss.items()}


def _validate_1epoch(
    cfg: Config,
    model: torch.nn.Module,
    valid_dataloader: torch.utils.data.DataLoader,
    criterion: torch.nn.Module,
    metrics: dict,
    device: torch.device,
) -> tuple[dict[str, float], dict[str, float], np.ndarray]:
    model.eval()
    valid_loss = defaultdict(float)
    valid_metrics = {name: 0.0 for name in metrics}
    valid_preds = []
    print(f"  valid: {len(valid_dataloader)} batches")
    with torch.no_grad():
        pbar = tqdm(valid_dataloader, total=len(valid_dataloader))
        for i, t in enumerate(pbar):
            x, y = t[:-1], t[-1]
            x = [t.to(device, non_blocking=True) for t in x]
            y_cpu = y
            y = y.to(device, non_blocking=True)
            with autocast():
                output = model(*x).squeeze(1)
                loss = criterion(output, y)
            if isinstance(loss, list):
                loss_total = sum(w * ls for w, ls in loss)
            else:
                loss_total = loss
            valid_loss["loss"] += loss_total.detach().float().cpu().item()
            output = output.cpu().numpy()
            for name, func in metrics.items():
                valid_metrics[name] += func(output, y_cpu.numpy())
            pbar.set_description(f'    loss: {valid_loss["loss"] / (i + 1):.4f}')
            valid_preds.append(output)
    valid_loss = {name: v / len(valid_dataloader) for name, v in valid_loss.items()}
    valid_metrics = {name: v / len(valid_dataloader) for name, v in valid_metrics.items()}
    return valid_loss, valid_metrics, np.concatenate(valid_preds)


def train_1fold(
    cfg: Config,
    model: torch.nn.Module,
    train_dataloader: torch.utils.data.DataLoader,
    valid_dataloader: torch.utils.data.DataLoader,
    test_data: pd.DataFrame,
    test_dataloader: torch.utils.data.DataLoader,
    criterion: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: LRScheduler,
    metrics: dict,
    device: torch.device,
) -> None:
    best_metric = 0.0
    os = -1
    for epoch in range(cfg.run.num_epochs):
        print(f"[Epoch {epoch + 1}/{cfg.run.num_epochs}]")
        train_loss = _train_1epoch(cfg, model, train_dataloader, criterion, optimizer, scheduler, device)
        valid_loss, valid_metrics, val_preds = _validate_1epoch(
            cfg, model, valid_dataloader, criterion, metrics, device
        )
        print(f"  train_loss: {train_loss}")
        print(f"  valid_loss: {valid_loss}")
        print(f"  valid_metrics: {valid_metrics}")
        if cfg.wandb is not None:
            wandb.log(
                {
                    "train_loss": train_loss["loss"],
                    "valid_loss": valid_loss["loss"],
                    **{f"valid_{k}": v for k, v in valid_metrics.items()},
                }
            )
        if valid_metrics[cfg.main_metric] > best_metric:
            new_metric = valid_metrics[cfg.main_metric]
            print(f"  best {cfg.main_metric} updated: {best_metric:.4f} -> {new_metric:.4f}")
            best_metric = new_metric
            os = epoch
            torch.save(model.state_dict(), cfg.save_path / f"fold{cfg.now_fold}_s{cfg.split.seed}_best_model.pth")
            save_oof_preds(cfg, val_preds)
        if epoch - os >= cfg.run.patience:
            print(f"  early stopping at epoch {epoch + 1}")
            break
    torch.save(model.state_dict(), cfg.save_path / f"fold{cfg.now_fold}_s{cfg.split.seed}_last_model.pth")

    if test_dataloader is not None:
        test_preds = run_inference(cfg, model, test_dataloader, cfg.inference.num_tta, test_data, device)
        test_metrics = calc_metrics(test_data, test_preds)
        print_metrics(test_metrics)
        with open(cfg.save_path / f"fold{cfg.now_fold}_s{cfg.split.seed}_test_metrics.json", "w") as f:
            json.dump(test_metrics, f, indent=2)
