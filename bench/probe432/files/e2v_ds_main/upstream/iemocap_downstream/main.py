"""
IEMOCAP 4-class downstream evaluation of emotion2vec features
(leave-one-session-out, 5 folds). Features are pre-extracted with
scripts/extract_features.py --granularity frame.

    python main.py dataset.feat_path=/path/to/feats/iemocap_frame
"""
import logging
import os
import random

import hydra
import numpy as np
import torch
import torch.nn as nn
from omegaconf import DictConfig, OmegaConf

from data import load_ssl_features, train_valid_test_iemocap_dataloader
from model import BaseModel
from utils import train_one_epoch, validate_and_test

logger = logging.getLogger('IEMOCAP_Downstream')


def seed_everything(seed):
    random.seed(seed)
    os.environ['PYTHONHASHSEED'] = str(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def build_model(cfg, device):
    model = BaseModel(input_dim=cfg.model.input_dim, output_dim=len(cfg.dataset.label_dict))
    model = model.to(device)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=cfg.optimization.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, cfg.optimization.epoch)
    return model, optimizer, scheduler


@hydra.main(config_path='config', config_name='default.yaml')
def train_iemocap(cfg: DictConfig):
    torch.set_num_threads(1)
    seed_everything(cfg.common.seed)
    logger.info(OmegaConf.to_yaml(cfg))

    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    logger.info(f'running on {device}')

    label_dict = dict(cfg.dataset.label_dict)
    dataset = load_ssl_features(cfg.dataset.feat_path, label_dict)

    test_wa_avg, test_ua_avg, test_f1_avg = 0., 0., 0.
    fold_sizes = dataset['session_sizes']
    n_folds = len(fold_sizes)

    for fold in range(n_folds):
        torch.cuda.empty_cache()
        test_start = sum(fold_sizes[:fold])
        test_len = fold_sizes[fold]

        train_loader, val_loader, test_loader = train_valid_test_iemocap_dataloader(
            dataset,
            cfg.dataset.batch_size,
            test_start,
            test_len,
            eval_is_test=cfg.dataset.eval_is_test,
            num_workers=cfg.dataset.num_workers,
        )

        model, optimizer, scheduler = build_model(cfg, device)
        criterion = nn.CrossEntropyLoss()

        best_val_wa = 0.
        best_val_wa_epoch = 0
        save_dir = os.path.join(str(cfg.common.save_dir), f'fold_{fold}')
        os.makedirs(save_dir, exist_ok=True)

        for epoch in range(cfg.optimization.epoch):
            train_loss = train_one_epoch(model, optimizer, criterion, train_loader, device)
            scheduler.step()

            val_wa, val_ua, val_f1 = validate_and_test(model, val_loader, device, num_classes=len(label_dict))
            if val_wa > best_val_wa:
                best_val_wa = val_wa
                best_val_wa_epoch = epoch
                torch.save(model.state_dict(), os.path.join(save_dir, 'best.pt'))

            logger.info(
                f"Fold {fold} Epoch {epoch + 1}, Training Loss: {train_loss:.6f}, "
                f"Validation WA: {val_wa:.2f}%; UA: {val_ua:.2f}%; F1: {val_f1:.2f}%"
            )

        ckpt = torch.load(os.path.join(save_dir, 'best.pt'), map_location=device)
        model.load_state_dict(ckpt, strict=True)
        test_wa, test_ua, test_f1 = validate_and_test(model, test_loader, device, num_classes=len(label_dict))
        logger.info(
            f"Fold {fold} best epoch {best_val_wa_epoch + 1}: "
            f"Test WA {test_wa:.2f}%; UA {test_ua:.2f}%; F1 {test_f1:.2f}%"
        )

        test_wa_avg += test_wa
        test_ua_avg += test_ua
        test_f1_avg += test_f1

    logger.info(
        f"Average WA: {test_wa_avg / n_folds:.2f}%; "
        f"UA: {test_ua_avg / n_folds:.2f}%; F1: {test_f1_avg / n_folds:.2f}%"
    )


if __name__ == '__main__':
    train_iemocap()
