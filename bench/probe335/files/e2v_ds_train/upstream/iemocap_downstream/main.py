"""
Leave-one-session-out training of a light-weight emotion classifier on top of
frozen emotion2vec features (IEMOCAP, 4 classes: ang / hap+exc / neu / sad).

    python iemocap_downstream/main.py \
        dataset.feat_path=features/iemocap/train \
        model._name=BaseModel optimization.lr=5e-4 common.seed=42
"""
import logging
import os
import random
import time

import hydra
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from omegaconf import DictConfig, OmegaConf
from sklearn.metrics import f1_score

from data import load_ssl_features, train_valid_test_iemocap_dataloader
from model import BaseModel
from utils import train_one_epoch, validate_and_test

logger = logging.getLogger(__name__)

LABEL_DICT = {"ang": 0, "hap": 1, "exc": 1, "neu": 2, "sad": 3}


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    os.environ["PYTHONHASHSEED"] = str(seed)


def get_device(cfg):
    if cfg.common.use_cuda and torch.cuda.is_available():
        return torch.device("cuda:{}".format(cfg.common.device_id))
    logger.warning("CUDA not available, falling back to CPU (this will be slow)")
    return torch.device("cpu")


def build_optimizer(cfg, model):
    params = [p for p in model.parameters() if p.requires_grad]
    if cfg.optimization.optimizer == "adamw":
        return optim.AdamW(params, lr=cfg.optimization.lr, weight_decay=cfg.optimization.weight_decay)
    if cfg.optimization.optimizer == "adam":
        return optim.Adam(params, lr=cfg.optimization.lr)
    if cfg.optimization.optimizer == "sgd":
        return optim.SGD(params, lr=cfg.optimization.lr, momentum=0.9, nesterov=True)
    raise ValueError(f"unknown optimizer {cfg.optimization.optimizer}")


def run_fold(cfg, dataset, fold, device):
    test_start, test_end = dataset["session_bounds"][fold]
    train_loader, val_loader, test_loader = train_valid_test_iemocap_dataloader(
        dataset,
        cfg.dataset.batch_size,
        test_start,
        test_end,
        eval_is_test=cfg.dataset.eval_is_test,
        num_workers=cfg.dataset.num_workers,
    )

    model = BaseModel(input_dim=cfg.model.input_dim, output_dim=len(set(LABEL_DICT.values())))
    model = model.to(device)

    optimizer = build_optimizer(cfg, model)
    scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.5, patience=5)
    criterion = nn.CrossEntropyLoss()

    best_val_wa, best_val_wa_epoch = 0.0, 0
    save_dir = os.path.join(str(cfg.common.save_dir), f"fold_{fold}")
    os.makedirs(save_dir, exist_ok=True)
    ckpt_path = os.path.join(save_dir, "best.pt")

    for epoch in range(cfg.optimization.epoch):
        t0 = time.time()
        train_loss = train_one_epoch(model, optimizer, criterion, train_loader, device)
        val_wa, val_ua, val_f1 = validate_and_test(model, val_loader, device, num_classes=4)
        scheduler.step(val_wa)
        if val_wa > best_val_wa:
            best_val_wa = val_wa
            best_val_wa_epoch = epoch
            torch.save(model.state_dict(), ckpt_path)
        logger.info(
            f"fold {fold} epoch {epoch}: loss {train_loss:.4f} val WA {val_wa:.2f} UA {val_ua:.2f} "
            f"F1 {val_f1:.2f} ({time.time() - t0:.1f}s, "
            f"{torch.cuda.max_memory_allocated() / 2**20:.0f} MiB peak)"
        )

    model.load_state_dict(torch.load(ckpt_path, map_location="cuda"))
    test_wa, test_ua, test_f1 = validate_and_test(model, test_loader, device, num_classes=4)
    logger.info(
        f"fold {fold}: best epoch {best_val_wa_epoch}, test WA {test_wa:.2f} UA {test_ua:.2f} F1 {test_f1:.2f}"
    )
    return test_wa, test_ua, test_f1


@hydra.main(config_path="config", config_name="default")
def main(cfg: DictConfig):
    logger.info(OmegaConf.to_yaml(cfg))
    seed_everything(cfg.common.seed)
    device = get_device(cfg)
    logger.info(f"using device {device}")

    dataset = load_ssl_features(cfg.dataset.feat_path, LABEL_DICT)

    n_folds = len(dataset["session_bounds"])
    results = []
    for fold in range(n_folds):
        torch.cuda.reset_peak_memory_stats()
        results.append(run_fold(cfg, dataset, fold, device))
    results = np.array(results)
    wa, ua, f1 = results.mean(axis=0)
    logger.info(f"{n_folds}-fold average: WA {wa:.2f} UA {ua:.2f} F1 {f1:.2f}")
    with open(os.path.join(str(cfg.common.save_dir), "results.txt"), "w") as f:
        for i, (a, b, c) in enumerate(results):
            f.write(f"fold {i}\t{a:.2f}\t{b:.2f}\t{c:.2f}\n")
        f.write(f"mean\t{wa:.2f}\t{ua:.2f}\t{f1:.2f}\n")


if __name__ == "__main__":
    main()
