"""Train one (or all) folds of a UTMOSv2 configuration.

    python train.py --config fusion_stage3 --fold 0 --seed 42 --wandb
"""
from __future__ import annotations

import argparse
import importlib
from pathlib import Path

import torch
import wandb

from utmosv2.dataset import get_dataset
from utmosv2.runner import train_1fold
from utmosv2.utils import (
    configure_args,
    configure_defaults,
    fix_seed,
    get_dataloader,
    get_inference_data,
    get_loss,
    get_metrics,
    get_model,
    get_optimizer,
    get_scheduler,
    get_train_data,
    save_test_preds,
    split_data,
)


def main(cfg):
    data = get_train_data(cfg)
    test_data = get_inference_data(cfg) if cfg.input_dir is not None else None
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(f"Using device: {device}")
    torch.backends.cudnn.benchmark = True

    for fold, (train_idx, val_idx) in enumerate(split_data(cfg, data)):
        if 0 <= cfg.now_fold != fold:
            continue
        cfg.now_fold = fold
        fix_seed(cfg.split.seed)
        train_data = data.iloc[train_idx]
        val_data = data.iloc[val_idx]
        print(f"+*+*[[Fold {fold + 1}/{cfg.num_folds}]]" + "+*" * 30)

        train_dataset = get_dataset(cfg, train_data, "train")
        val_dataset = get_dataset(cfg, val_data, "valid")
        train_dataloader = get_dataloader(cfg, train_dataset, "train")
        val_dataloader = get_dataloader(cfg, val_dataset, "valid")
        if test_data is not None:
            test_dataset = get_dataset(cfg, test_data, "test")
            test_dataloader = get_dataloader(cfg, test_dataset, "test")
        else:
            test_dataloader = None

        model = get_model(cfg, device)
        criterion = get_loss(cfg)
        optimizer = get_optimizer(cfg, model)
        scheduler = get_scheduler(cfg, optimizer, len(train_dataloader))
        metrics = get_metrics()

        if cfg.wandb:
            wandb.init(
                project="voice-mos-challenge-2024",
                name=f"{cfg.config_name}_fold{fold}_s{cfg.split.seed}",
                config=vars(cfg),
            )

        train_1fold(
            cfg,
            model,
            train_dataloader,
            val_dataloader,
            test_data,
            test_dataloader,
            criterion,
            optimizer,
            scheduler,
            metrics,
            device,
        )

        if cfg.wandb:
            wandb.finish()

        del model, optimizer, scheduler
        torch.cuda.empty_cache()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--config_file", type=str, default="fusion_stage3", help="config file name")
    parser.add_argument("--fold", type=int, default=-1, help="fold number (-1: all folds)")
    parser.add_argument("--seed", type=int, default=42, help="random seed for split")
    parser.add_argument("--input_dir", type=str, default=None, help="optional test wav directory")
    parser.add_argument("--wandb", action="store_true", help="log to wandb")
    parser.add_argument("--reproduce", action="store_true", help="deterministic data sampling")
    args = parser.parse_args()

    cfg = importlib.import_module(f"utmosv2.config.{args.config_file}")
    configure_args(cfg, args)
    configure_defaults(cfg)
    cfg.save_path = Path("models") / cfg.config_name
    cfg.save_path.mkdir(parents=True, exist_ok=True)
    main(cfg)
